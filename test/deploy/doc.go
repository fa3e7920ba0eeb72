// Package deploy checks what `loom manifests` writes against a real
// kube-apiserver: every object of deploy/, the APIServices too, must pass
// its validation (a server-side dry-run apply).
//
// The test lives here and not in cmd/loom because a module loom init
// writes has loom as a tool, and go mod tidy there reads the tests of its
// tools: what they import (a kube-apiserver harness) would become the
// module's requirements.
package deploy
