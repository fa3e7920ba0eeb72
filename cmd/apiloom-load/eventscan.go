package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The watch streams of a fan-out round are read on the same two cores as
// the server, and the load generator used more CPU there than the server:
// json-iterator's decoding of each event was half of it, nearly all in
// skipping the ~1 KiB payload byte by byte. eventScanner walks each JSON
// value once, in the buffer it was read into, picks out the handful of
// fields the generator checks and passes over the rest, strings with
// bytes.IndexByte. It is a reader of watch events for this tool, not a JSON
// validator: it checks the structure of the objects it walks into, and only
// counts brackets in the values it skips. On a stream of events that
// json-iterator decodes, it reports the same events (FuzzScanEvents).

// eventFields is what the generator reads of one watch event.
type eventFields struct {
	typ, name, rv   string
	seq, marker     string
	hasSeq          bool
	code            int64
	reason, message string
}

// scanBufSize is the first buffer size: a few frames of ~1.3 KiB. A frame
// larger than the buffer grows it.
const scanBufSize = 64 << 10

// eventScanner reads a stream of JSON values (watch events) from r.
type eventScanner struct {
	r          io.Reader
	buf        []byte
	head, tail int   // buf[head:tail] is read and not yet consumed
	readErr    error // the reader's error, io.EOF at the end
}

func newEventScanner(r io.Reader) *eventScanner {
	return &eventScanner{r: r, buf: make([]byte, scanBufSize)}
}

// errNotJSON is a stream whose next value is not a JSON object.
var errNotJSON = errors.New("apiloom-load: watch stream is not JSON")

// errShort is a value that goes on past the bytes read so far.
var errShort = errors.New("apiloom-load: watch event cut short")

// next returns the next event's fields. It returns io.EOF when the stream
// ended cleanly between values, the reader's error when it failed, and an
// error for a malformed or cut-short value.
func (s *eventScanner) next() (eventFields, error) {
	for {
		s.skipSpace()
		if s.head < s.tail {
			break
		}
		if err := s.fill(); err != nil {
			return eventFields{}, err
		}
	}
	if s.buf[s.head] != '{' {
		return eventFields{}, errNotJSON
	}
	for {
		ev, n, err := parseEvent(s.buf[s.head:s.tail])
		if err == nil {
			s.head += n
			return ev, nil
		}
		if !errors.Is(err, errShort) {
			return eventFields{}, err
		}
		// Cut short by the buffer: read more and parse the value again.
		// Values larger than what one read brings are rare (the fan-out's
		// are ~1.3 KiB, reads up to 16 KiB).
		if err := s.fill(); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return eventFields{}, err
		}
	}
}

func (s *eventScanner) skipSpace() {
	for s.head < s.tail && isSpace(s.buf[s.head]) {
		s.head++
	}
}

// fill reads more into the buffer, moving the unread bytes to its start
// and growing it when they fill it.
func (s *eventScanner) fill() error {
	if s.readErr != nil {
		return s.readErr
	}
	if s.head > 0 {
		s.tail = copy(s.buf, s.buf[s.head:s.tail])
		s.head = 0
	}
	if s.tail == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	n, err := s.r.Read(s.buf[s.tail:])
	s.tail += n
	if err != nil {
		s.readErr = err
		if n > 0 {
			return nil
		}
		return err
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// valueEnd returns one past the end of the object or array starting at
// b[0], or 0 if b ends first. It counts brackets outside strings.
func valueEnd(b []byte) int {
	depth := 0
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			j, ok := stringEnd(b, i)
			if !ok {
				return 0
			}
			i = j
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
		for i < len(b) && !structural[b[i]] {
			i++
		}
	}
	return 0
}

// structural marks the bytes valueEnd stops at. A table, not
// bytes.IndexAny, which for five bytes loops byte by byte too and was a
// fifth of the generator's CPU by profile; long strings are skipped with
// bytes.IndexByte.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// stringEnd returns one past the closing quote of the string whose opening
// quote is b[i], and false if b ends first.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; ; {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		backslashes := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// parseEvent reads the fields of the event whose JSON object starts b, and
// returns how long it is; errShort if b ends first.
func parseEvent(b []byte) (eventFields, int, error) {
	var ev eventFields
	p := &eventParser{b: b}
	err := p.object(func(key []byte) error {
		switch string(key) {
		case "type":
			return p.str(&ev.typ)
		case "object":
			return p.object(func(key []byte) error {
				switch string(key) {
				case "metadata":
					return p.object(func(key []byte) error {
						switch string(key) {
						case "name":
							return p.str(&ev.name)
						case "resourceVersion":
							return p.str(&ev.rv)
						case "labels":
							return p.object(func(key []byte) error {
								switch string(key) {
								case labelSeq:
									ev.hasSeq = true
									return p.str(&ev.seq)
								case labelMarker:
									return p.str(&ev.marker)
								}
								return p.skip()
							})
						}
						return p.skip()
					})
				case "code":
					return p.int(&ev.code)
				case "reason":
					return p.str(&ev.reason)
				case "message":
					return p.str(&ev.message)
				}
				return p.skip()
			})
		}
		return p.skip()
	})
	if err != nil {
		return eventFields{}, 0, err
	}
	return ev, p.i, nil
}

// eventParser walks one JSON value in b from i.
type eventParser struct {
	b []byte
	i int
}

// fail is a malformed value, or errShort when b ends where the value
// would go on.
func (p *eventParser) fail(what string) error {
	if p.i >= len(p.b) {
		return errShort
	}
	return fmt.Errorf("apiloom-load: watch event: %s at byte %d", what, p.i)
}

func (p *eventParser) space() {
	for p.i < len(p.b) && isSpace(p.b[p.i]) {
		p.i++
	}
}

// object reads an object, calling field for each key with p at its value;
// field must consume the value. A null is an object without fields.
func (p *eventParser) object(field func(key []byte) error) error {
	p.space()
	if null, err := p.null(); null || err != nil {
		return err
	}
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return p.fail("expected an object")
	}
	p.i++
	for first := true; ; first = false {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return nil
		}
		if !first {
			if p.i >= len(p.b) || p.b[p.i] != ',' {
				return p.fail("expected , or }")
			}
			p.i++
			p.space()
		}
		key, err := p.rawString()
		if err != nil {
			return err
		}
		if p.space(); p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.fail("expected :")
		}
		p.i++
		if err := field(key); err != nil {
			return err
		}
	}
}

// rawString reads a string and returns it as it is between the quotes, or
// decoded when it has escapes.
func (p *eventParser) rawString() ([]byte, error) {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, p.fail("expected a string")
	}
	end, ok := stringEnd(p.b, p.i)
	if !ok {
		return nil, errShort
	}
	raw := p.b[p.i:end]
	p.i = end
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, p.fail("bad string")
	}
	return []byte(s), nil
}

// str reads a string into s; null leaves it empty.
func (p *eventParser) str(s *string) error {
	p.space()
	if null, err := p.null(); null || err != nil {
		return err
	}
	raw, err := p.rawString()
	if err != nil {
		return err
	}
	*s = string(raw)
	return nil
}

func (p *eventParser) int(n *int64) error {
	p.space()
	start := p.i
	for p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] >= '0' && p.b[p.i] <= '9') {
		p.i++
	}
	if p.i == len(p.b) {
		return errShort // the number may go on
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	if err != nil {
		return p.fail("expected an integer")
	}
	*n = v
	return nil
}

// null reads a null if one is next.
func (p *eventParser) null() (bool, error) {
	rest := p.b[p.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("null")):
		p.i += len("null")
		return true, nil
	case len(rest) < len("null") && strings.HasPrefix("null", string(rest)):
		return false, errShort
	}
	return false, nil
}

// skip passes over one value of any kind.
func (p *eventParser) skip() error {
	p.space()
	if p.i >= len(p.b) {
		return p.fail("expected a value")
	}
	switch p.b[p.i] {
	case '"':
		_, err := p.rawString()
		return err
	case '{', '[':
		end := valueEnd(p.b[p.i:])
		if end == 0 {
			return errShort
		}
		p.i += end
		return nil
	}
	start := p.i
	for p.i < len(p.b) && !isSpace(p.b[p.i]) && p.b[p.i] != ',' && p.b[p.i] != '}' && p.b[p.i] != ']' {
		p.i++
	}
	if p.i == len(p.b) {
		return errShort // the number or literal may go on
	}
	if !json.Valid(p.b[start:p.i]) {
		return p.fail("bad literal")
	}
	return nil
}
