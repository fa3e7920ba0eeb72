package sim

import "errors"

var (
	errTooOld = errors.New("sim: too old resource version")
	errReset  = errors.New("sim: connection reset")
)
