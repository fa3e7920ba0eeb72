package endpoints

import "github.com/apiloom/apiloom/server/wire"

// hasProtobuf reports whether obj's type has protobuf methods.
func hasProtobuf(obj any) bool { return wire.HasProtobuf(obj) }
