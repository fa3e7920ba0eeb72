package registry

import "github.com/apiloom/apiloom/server/resource"

// builder is filled in when the storage and handler packages land.
type builder func()

func buildFor[O resource.Object](def *resource.Definition[O]) builder { return func() {} }
