package pipeline

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ErrNoProtoc is returned when protoc, which go-to-protobuf runs and no Go
// module provides, is not on PATH. Nothing is generated or deleted then.
var ErrNoProtoc = errors.New("pipeline: protoc (the protobuf compiler) is not on PATH; " +
	"install it: apt-get install protobuf-compiler (Debian, Ubuntu; apiloom's hack/lib/protoc.sh does this), " +
	"brew install protobuf (macOS), or a release from https://github.com/protocolbuffers/protobuf/releases")

// ErrProtobufFieldName is returned when a field of an API type has the
// name of a method protobuf's generated code adds to every type.
var ErrProtobufFieldName = errors.New("pipeline: fields named like the methods generated.pb.go adds")

// protobufUpstream are the apimachinery packages API types use whose
// .proto files (generated.proto, shipped in the module) are imported;
// "-" tells go-to-protobuf to read, never write, them.
var protobufUpstream = []string{
	"-k8s.io/apimachinery/pkg/util/intstr",
	"-k8s.io/apimachinery/pkg/api/resource",
	"-k8s.io/apimachinery/pkg/runtime/schema",
	"-k8s.io/apimachinery/pkg/runtime",
	"-k8s.io/apimachinery/pkg/apis/meta/v1",
}

// protobuf runs go-to-protobuf over the API packages: generated.proto and
// generated.pb.go beside the types (gogo's Marshal, Unmarshal, Size, ...
// for every type, as k8s.io/api has), and protobuf struct tags added to
// the types' fields, numbering them for good.
//
// go-to-protobuf finds every .proto by import path under one directory
// (--output-dir, a GOPATH-like tree; Kubernetes' staging/src), where protoc
// also reads and writes. That tree is made in the work directory from
// symbolic links: the module's path to its root, and k8s.io/apimachinery
// and github.com/gogo/protobuf (gogo.proto, and descriptor.proto under its
// protobuf/) to their directories in the module cache, at the versions the
// module requires.
func (r *runner) protobuf(ctx context.Context, hdr, pkgs []string) error {
	cfg := r.m.cfg
	if err := checkProtobufFieldNames(filepath.Join(cfg.Root, cfg.APIsDir)); err != nil {
		return err
	}
	src := filepath.Join(r.work, "src")
	links := map[string]string{r.m.path: cfg.Root}
	for _, mod := range []string{"k8s.io/apimachinery", "github.com/gogo/protobuf"} {
		dir, err := goOutput(ctx, cfg, "list", "-m", "-f", "{{.Dir}}", mod)
		if dir = strings.TrimSpace(dir); err == nil && dir == "" {
			err = fmt.Errorf("not in the module cache (go mod download %s)", mod)
		}
		if err != nil {
			return fmt.Errorf("go-to-protobuf: finding the .proto files of %s: %w", mod, err)
		}
		links[mod] = dir
	}
	for imp, dir := range links {
		link := filepath.Join(src, filepath.FromSlash(imp))
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(dir, link); err != nil {
			return err
		}
	}
	goroot, err := goOutput(ctx, cfg, "env", "GOROOT")
	if err != nil {
		return err
	}
	// protoc finds protoc-gen-gogo, and go-to-protobuf goimports and gofmt,
	// on PATH: the ones built from the module's go.mod, and the go
	// command's own gofmt, go first.
	pathEnv := strings.Join([]string{r.bin, filepath.Join(strings.TrimSpace(goroot), "bin"), os.Getenv("PATH")}, string(filepath.ListSeparator))
	cmd := exec.CommandContext(ctx, filepath.Join(r.bin, "go-to-protobuf"), flatten([]any{hdr,
		"--output-dir", src,
		"--proto-import", filepath.Join(src, "github.com", "gogo", "protobuf", "protobuf"),
		"--apimachinery-packages", strings.Join(protobufUpstream, ","),
		"--packages", strings.Join(pkgs, ","),
	})...)
	cmd.Dir = cfg.Root
	cmd.Env = append(os.Environ(), "PATH="+pathEnv)
	cmd.Stdout, cmd.Stderr = cfg.Log, cfg.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go-to-protobuf: %w", err)
	}
	return nil
}

// protobufMethods are the names gogo's generator keeps for methods: a
// field so named is renamed in the Go code it generates (Size_), code that
// go-to-protobuf keeps while it drops the generated types for the module's
// own, so the package would not compile.
var protobufMethods = map[string]bool{
	"Reset": true, "String": true, "ProtoMessage": true, "Marshal": true, "Unmarshal": true,
	"ExtensionRangeArray": true, "ExtensionMap": true, "Descriptor": true, "MarshalTo": true,
	"MarshalToSizedBuffer": true, "Equal": true, "VerboseEqual": true, "GoString": true,
	"ProtoSize": true, "Size": true,
}

// protobufFalse is go-to-protobuf's marker for a type it must leave out.
var protobufFalse = regexp.MustCompile(`(?m)^\s*\+protobuf=false\s*$`)

// checkProtobufFieldNames fails, naming each, when an exported struct type
// of an API package has a field named like a method generated.pb.go adds,
// unless the type is marked +protobuf=false; go-to-protobuf would write
// code that does not compile.
func checkProtobufFieldNames(apisDir string) error {
	var bad []string
	err := filepath.WalkDir(apisDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") ||
			strings.HasPrefix(d.Name(), "zz_generated.") || d.Name() == "generated.pb.go" {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || !ts.Name.IsExported() || protobufFalse.MatchString(gd.Doc.Text()+ts.Doc.Text()) {
					continue
				}
				for _, field := range st.Fields.List {
					for _, name := range field.Names {
						if protobufMethods[name.Name] || strings.HasPrefix(name.Name, "XXX_") {
							rel, _ := filepath.Rel(filepath.Dir(apisDir), p)
							bad = append(bad, fmt.Sprintf("%s: %s.%s", filepath.ToSlash(rel), ts.Name.Name, name.Name))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%w: rename each Go field (its json name, the API's, can stay), "+
		"or leave its type out of protobuf with a +protobuf=false comment line (and every type holding it, up to the kind):\n  %s",
		ErrProtobufFieldName, strings.Join(bad, "\n  "))
}

// isProtobufOutput reports whether the file at p, named generated.proto or
// generated.pb.go, is go-to-protobuf's, so stale outputs can be deleted
// without touching a file of the same name the module wrote itself.
func isProtobufOutput(p string) (bool, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return false, err
	}
	switch path.Base(filepath.ToSlash(p)) {
	case "generated.proto":
		return strings.Contains(string(data), "This file was autogenerated by go-to-protobuf. Do not edit it manually!"), nil
	case "generated.pb.go":
		return strings.Contains(string(data), "// Code generated by protoc-gen-gogo. DO NOT EDIT."), nil
	}
	return false, nil
}
