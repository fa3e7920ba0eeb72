//go:build tools

// Package tools pins the h2spec conformance tool that h2spec_test.go
// builds. It is a module of its own so that h2spec stays out of apiloom's
// go.mod; go test never compiles it.
package tools

import _ "github.com/summerwind/h2spec/cmd/h2spec"
