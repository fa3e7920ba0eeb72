package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Generate regenerates everything derived from the module's API packages:
// zz_generated.{deepcopy,register,conversion}.go, generated.proto and
// generated.pb.go beside the types (and protobuf tags on their fields), and
// under OutputDir the OpenAPI definitions, the server wiring, apply
// configurations, clientset, listers and informers. Stale outputs are
// deleted first, so a removed type or group leaves nothing behind. It
// returns the first generator's failure, with what it printed.
func Generate(ctx context.Context, cfg Config) error {
	cfg, err := cfg.Complete(ctx)
	if err != nil {
		return err
	}
	m, err := loadModule(cfg)
	if err != nil {
		return err
	}
	// Before anything is deleted.
	if _, err := exec.LookPath("protoc"); err != nil {
		return ErrNoProtoc
	}
	work, err := os.MkdirTemp("", "apiloom-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	r := &runner{m: m, work: work, bin: filepath.Join(work, "bin")}
	return r.run(ctx)
}

// runner runs the generators of one Generate.
type runner struct {
	m *module
	// work is a scratch directory, bin the generators built into it.
	work, bin string
	header    string
}

func (r *runner) run(ctx context.Context) error {
	m, cfg := r.m, r.m.cfg
	r.header = cfg.HeaderFile
	if r.header == "" {
		r.header = filepath.Join(r.work, "boilerplate.go.txt")
		if err := os.WriteFile(r.header, nil, 0o644); err != nil {
			return err
		}
	}
	// One go build for all: built in parallel, from the module's go.mod.
	if err := os.Mkdir(r.bin, 0o755); err != nil {
		return err
	}
	if err := r.exec(ctx, cfg.Go, append([]string{"build", "-o", r.bin + string(filepath.Separator)}, Tools...)...); err != nil {
		return fmt.Errorf("building the generators (each must be a `tool` in go.mod): %w", err)
	}

	// Stale outputs go first.
	if err := os.RemoveAll(filepath.Join(cfg.Root, cfg.OutputDir)); err != nil {
		return err
	}
	if err := removeGenerated(filepath.Join(cfg.Root, cfg.APIsDir)); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Log, "generating for: %s\n", strings.Join(m.apiDirs, " "))
	pkgs := m.pkgs()
	hdr := []string{"--go-header-file", r.header}

	if err := r.tool(ctx, "deepcopy-gen", hdr, "--output-file", "zz_generated.deepcopy.go", pkgs); err != nil {
		return err
	}
	if err := r.tool(ctx, "register-gen", hdr, "--output-file", "zz_generated.register.go", pkgs); err != nil {
		return err
	}
	if err := r.conversions(ctx, hdr, pkgs); err != nil {
		return err
	}
	if err := r.protobuf(ctx, hdr, pkgs); err != nil {
		return err
	}
	if err := r.openapi(ctx, hdr, pkgs); err != nil {
		return err
	}

	// The server wiring comes before the apply configurations: their type
	// converter needs the OpenAPI schema of every kind, which the server
	// states.
	builtins := []string{}
	if cfg.BuiltinsFile != "none" {
		builtins = []string{"--builtins", cfg.BuiltinsFile}
	}
	if exists(filepath.Join(cfg.Root, cfg.HooksDir)) {
		builtins = append(builtins, "--hooks-pkg", path.Join(m.path, filepath.ToSlash(cfg.HooksDir)))
	}
	// apiserver-gen writes the stream methods client-gen cannot into the
	// clientset's typed packages first; client-gen then leaves them be.
	if err := r.tool(ctx, "apiserver-gen", hdr, builtins,
		"--clientset-dir", m.outDir("clientset", "versioned"), "--clientset-pkg", m.outPkg("clientset", "versioned"),
		"--output-dir", m.outDir("apiserver"), "--output-pkg", m.outPkg("apiserver"), pkgs); err != nil {
		return err
	}
	schema, err := r.openAPISchema(ctx)
	if err != nil {
		return err
	}
	if err := r.tool(ctx, "applyconfiguration-gen", hdr, "--openapi-schema", schema,
		"--output-dir", m.outDir("applyconfigurations"), "--output-pkg", m.outPkg("applyconfigurations"), pkgs); err != nil {
		return err
	}
	inputs := []string{}
	for _, d := range m.apiDirs {
		inputs = append(inputs, "--input", strings.TrimPrefix(d, filepath.ToSlash(cfg.APIsDir)+"/"))
	}
	if err := r.tool(ctx, "client-gen", hdr, "--clientset-name", "versioned",
		"--input-base", m.path+"/"+filepath.ToSlash(cfg.APIsDir), inputs,
		"--output-dir", m.outDir("clientset"), "--output-pkg", m.outPkg("clientset"),
		"--apply-configuration-package", m.outPkg("applyconfigurations")); err != nil {
		return err
	}
	if err := r.tool(ctx, "lister-gen", hdr,
		"--output-dir", m.outDir("listers"), "--output-pkg", m.outPkg("listers"), pkgs); err != nil {
		return err
	}
	if err := r.tool(ctx, "informer-gen", hdr,
		"--output-dir", m.outDir("informers"), "--output-pkg", m.outPkg("informers"),
		"--versioned-clientset-package", m.outPkg("clientset", "versioned"),
		"--listers-package", m.outPkg("listers"), pkgs); err != nil {
		return err
	}
	return r.gofmt(ctx)
}

// openapi runs openapi-gen over the API packages, the upstream packages of
// the built-in kinds, the apimachinery types every kind embeds (and
// resource.Quantity, which ResourceQuota holds), and the
// review kinds every server serves (package server/reviews).
func (r *runner) openapi(ctx context.Context, hdr, pkgs []string) error {
	upstream := []string{
		"k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/runtime",
		"k8s.io/apimachinery/pkg/version", "k8s.io/apimachinery/pkg/util/intstr",
		"k8s.io/apimachinery/pkg/api/resource",
		"k8s.io/api/autoscaling/v1",
		"k8s.io/api/authorization/v1", "k8s.io/api/authentication/v1",
	}
	readonly := []string{}
	for _, p := range append([]string{
		"k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/runtime",
		"k8s.io/apimachinery/pkg/version", "k8s.io/apimachinery/pkg/types",
		"k8s.io/apimachinery/pkg/api/resource", "k8s.io/apimachinery/pkg/util/intstr",
		"k8s.io/api/autoscaling/v1",
		"k8s.io/api/authorization/v1", "k8s.io/api/authentication/v1",
	}, r.m.builtinPkgs...) {
		readonly = append(readonly, "--readonly-pkg", p)
	}
	return r.tool(ctx, "openapi-gen", hdr,
		"--output-file", "zz_generated.openapi.go", "--output-dir", r.m.outDir("openapi"),
		"--output-pkg", r.m.outPkg("openapi"), "--report-filename", os.DevNull,
		readonly, upstream, r.m.builtinPkgs, pkgs)
}

// openAPISchemaMain prints the OpenAPI v2 document the module's server
// serves; applyconfiguration-gen reads it (--openapi-schema), so apply
// configurations and fake clientsets know each kind's structure. It is
// compiled in the module, outside its tree, so nothing is written there.
const openAPISchemaMain = `package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/version"

	"github.com/apiloom/apiloom/server/discovery"
	"github.com/apiloom/apiloom/server/registry"

	"%s"
)

func main() {
	reg := &registry.Registry{}
	apiserver.Install(reg)
	d, err := discovery.New(reg.Infos(), reg.OpenAPIDefinitions(), version.Info{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "openapi-schema:", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(d.OpenAPIV2JSON()); err != nil {
		os.Exit(1)
	}
}
`

// openAPISchema writes the module's OpenAPI v2 document into the work
// directory and returns its path.
func (r *runner) openAPISchema(ctx context.Context) (string, error) {
	dir := filepath.Join(r.work, "openapi-schema")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	main := filepath.Join(dir, "main.go")
	if err := os.WriteFile(main, fmt.Appendf(nil, openAPISchemaMain, r.m.outPkg("apiserver")), 0o644); err != nil {
		return "", err
	}
	out, err := goOutput(ctx, r.m.cfg, "run", main)
	if err != nil {
		return "", fmt.Errorf("printing the OpenAPI schema: %w", err)
	}
	schema := filepath.Join(r.work, "openapi-schema.json")
	return schema, os.WriteFile(schema, []byte(out), 0o644)
}

// gofmt simplifies and formats every generated file, as `gofmt -s -w`.
func (r *runner) gofmt(ctx context.Context) error {
	goroot, err := goOutput(ctx, r.m.cfg, "env", "GOROOT")
	if err != nil {
		return err
	}
	gofmt := filepath.Join(strings.TrimSpace(goroot), "bin", "gofmt")
	return r.exec(ctx, gofmt, "-s", "-w", r.m.cfg.OutputDir, r.m.cfg.APIsDir)
}

// tool runs the generator name from the work directory's bin with args,
// each a string or a []string, flattened.
func (r *runner) tool(ctx context.Context, name string, args ...any) error {
	if err := r.exec(ctx, filepath.Join(r.bin, name), flatten(args)...); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// exec runs a command in the module's root, its output going to the log.
func (r *runner) exec(ctx context.Context, name string, args ...string) error {
	return r.execTo(ctx, r.m.cfg.Log, name, args...)
}

func (r *runner) execTo(ctx context.Context, w io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = r.m.cfg.Root
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run()
}

func flatten(args []any) []string {
	var out []string
	for _, a := range args {
		switch a := a.(type) {
		case string:
			out = append(out, a)
		case []string:
			out = append(out, a...)
		default:
			panic(fmt.Sprintf("pipeline: argument of type %T", a))
		}
	}
	return out
}

// removeGenerated deletes the zz_generated.*.go files under dir, and the
// generated.proto and generated.pb.go files go-to-protobuf wrote there.
func removeGenerated(dir string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), "zz_generated.") && strings.HasSuffix(d.Name(), ".go") {
			return os.Remove(p)
		}
		if d.Name() == "generated.proto" || d.Name() == "generated.pb.go" {
			if ours, err := isProtobufOutput(p); err != nil || !ours {
				return err
			}
			return os.Remove(p)
		}
		return nil
	})
}

// conversions runs conversion-gen: conversions between each version of a
// kind and the version it is stored in (+kubebuilder:storageversion), for
// packages whose doc.go names the storage version's package in
// +k8s:conversion-gen=<import path>. conversion-gen writes what matching
// fields allow and only warns about the rest; a conversion it could not
// write must be written by hand beside the types, so a missing one fails
// here, named as it must be.
func (r *runner) conversions(ctx context.Context, hdr, pkgs []string) error {
	var log bytes.Buffer
	err := r.execTo(ctx, &log, filepath.Join(r.bin, "conversion-gen"),
		flatten([]any{hdr, "--output-file", "zz_generated.conversion.go", pkgs})...)
	if err != nil {
		r.m.cfg.Log.Write(log.Bytes())
		return fmt.Errorf("conversion-gen: %w", err)
	}
	if missing := missingConversions(log.String()); missing != "" {
		return fmt.Errorf("conversion-gen: these conversions need writing by hand, in the package that has +k8s:conversion-gen (k8s.io/apimachinery/pkg/conversion):\n%s", missing)
	}
	return nil
}
