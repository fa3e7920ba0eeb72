package h2

import (
	"encoding/binary"

	"golang.org/x/net/http2"
)

// frameHeaderLen is the length of every frame's fixed header.
const frameHeaderLen = 9

// Frame types and flags this package writes.
const (
	frameData         = byte(http2.FrameData)
	frameHeaders      = byte(http2.FrameHeaders)
	frameRSTStream    = byte(http2.FrameRSTStream)
	frameSettings     = byte(http2.FrameSettings)
	framePing         = byte(http2.FramePing)
	frameGoAway       = byte(http2.FrameGoAway)
	frameWindowUpdate = byte(http2.FrameWindowUpdate)
	frameContinuation = byte(http2.FrameContinuation)
	framePushPromise  = byte(http2.FramePushPromise)

	flagEndStream  = byte(http2.FlagDataEndStream)
	flagAck        = byte(http2.FlagSettingsAck)
	flagEndHeaders = byte(http2.FlagHeadersEndHeaders)
)

// appendFrameHeader appends a frame header for a payload of length n.
func appendFrameHeader(b []byte, n int, typ, flags byte, streamID uint32) []byte {
	return append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags,
		byte(streamID>>24), byte(streamID>>16), byte(streamID>>8), byte(streamID))
}

// putFrameLength rewrites the length of the frame header at b[0:9], for a
// DATA frame whose payload was appended after its header.
func putFrameLength(b []byte, n int) {
	b[0], b[1], b[2] = byte(n>>16), byte(n>>8), byte(n)
}

func appendSettings(b []byte, settings ...http2.Setting) []byte {
	b = appendFrameHeader(b, 6*len(settings), frameSettings, 0, 0)
	for _, s := range settings {
		b = binary.BigEndian.AppendUint16(b, uint16(s.ID))
		b = binary.BigEndian.AppendUint32(b, s.Val)
	}
	return b
}

func appendSettingsAck(b []byte) []byte {
	return appendFrameHeader(b, 0, frameSettings, flagAck, 0)
}

func appendPingAck(b []byte, data [8]byte) []byte {
	b = appendFrameHeader(b, 8, framePing, flagAck, 0)
	return append(b, data[:]...)
}

func appendWindowUpdate(b []byte, streamID, incr uint32) []byte {
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, streamID)
	return binary.BigEndian.AppendUint32(b, incr&0x7fffffff)
}

func appendRSTStream(b []byte, streamID uint32, code http2.ErrCode) []byte {
	b = appendFrameHeader(b, 4, frameRSTStream, 0, streamID)
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

func appendGoAway(b []byte, lastStreamID uint32, code http2.ErrCode) []byte {
	b = appendFrameHeader(b, 8, frameGoAway, 0, 0)
	b = binary.BigEndian.AppendUint32(b, lastStreamID&0x7fffffff)
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// appendHeaderBlock appends block as a HEADERS frame followed by as many
// CONTINUATION frames as maxFrame requires. They go out back to back: the
// writer is the only one appending, so no other frame can come between.
func appendHeaderBlock(b []byte, streamID uint32, block []byte, endStream bool, maxFrame int) []byte {
	typ, flags := frameHeaders, byte(0)
	if endStream {
		flags = flagEndStream
	}
	for {
		n := min(len(block), maxFrame)
		f := flags
		if n == len(block) {
			f |= flagEndHeaders
		}
		b = appendFrameHeader(b, n, typ, f, streamID)
		b = append(b, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return b
		}
		typ, flags = frameContinuation, 0
	}
}
