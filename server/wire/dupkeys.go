package wire

import "bytes"

// maxScanDepth bounds the nesting hasDuplicateKeys follows. Deeper
// documents are reported as suspect, which sends them to the exact (and
// also depth-limited) slow path instead of recursing without bound.
const maxScanDepth = 100

// hasDuplicateKeys reports whether some JSON object in data names a key
// twice. It runs after json-iterator accepted data, so it only skims: it
// compares keys as raw bytes without allocating, and anything it cannot
// judge that way (a key with an escape sequence, malformed input, very deep
// nesting) counts as a duplicate. A false positive costs one authoritative
// decode on the slow path; a false negative would hide a strict error, so
// there are none.
func hasDuplicateKeys(data []byte) bool {
	s := scanner{data: data}
	if s.value(0) {
		return true
	}
	s.skipSpace()
	return s.i != len(s.data)
}

// scanner walks one JSON document; i is the next byte to read.
type scanner struct {
	data []byte
	i    int
}

// value consumes one value and reports whether it has, or is suspected to
// have, a duplicate key.
func (s *scanner) value(depth int) bool {
	if depth > maxScanDepth {
		return true
	}
	s.skipSpace()
	if s.i >= len(s.data) {
		return true
	}
	switch s.data[s.i] {
	case '{':
		return s.object(depth)
	case '[':
		return s.array(depth)
	case '"':
		_, ok := s.str()
		return !ok
	default:
		for s.i < len(s.data) {
			switch s.data[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return false
			}
			s.i++
		}
		return false
	}
}

func (s *scanner) object(depth int) bool {
	s.i++ // '{'
	var keys keySet
	for {
		s.skipSpace()
		if s.i >= len(s.data) {
			return true
		}
		switch s.data[s.i] {
		case '}':
			s.i++
			return false
		case ',':
			s.i++
			continue
		}
		key, ok := s.str()
		if !ok || bytes.IndexByte(key, '\\') >= 0 || !keys.add(key) {
			return true
		}
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return true
		}
		s.i++
		if s.value(depth + 1) {
			return true
		}
	}
}

func (s *scanner) array(depth int) bool {
	s.i++ // '['
	for {
		s.skipSpace()
		if s.i >= len(s.data) {
			return true
		}
		switch s.data[s.i] {
		case ']':
			s.i++
			return false
		case ',':
			s.i++
			continue
		}
		if s.value(depth + 1) {
			return true
		}
	}
}

// str consumes a string and returns its raw contents, escapes included.
func (s *scanner) str() ([]byte, bool) {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.data); j++ {
		switch s.data[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return s.data[start:j], true
		}
	}
	return nil, false
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// keySet is the set of keys seen in one object. Objects are small, so it
// starts as a fixed array and becomes a map only for large ones (label
// maps), keeping the scan linear.
type keySet struct {
	n    int
	list [keySetListMax][]byte
	set  map[string]struct{}
}

const keySetListMax = 16

// add records key and reports whether it was new.
func (s *keySet) add(key []byte) bool {
	if s.set != nil {
		if _, ok := s.set[string(key)]; ok {
			return false
		}
		s.set[string(key)] = struct{}{}
		return true
	}
	for _, k := range s.list[:s.n] {
		if bytes.Equal(k, key) {
			return false
		}
	}
	if s.n < keySetListMax {
		s.list[s.n] = key
		s.n++
		return true
	}
	s.set = make(map[string]struct{}, 2*keySetListMax)
	for _, k := range s.list {
		s.set[string(k)] = struct{}{}
	}
	s.set[string(key)] = struct{}{}
	return true
}
