package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"sigs.k8s.io/yaml"
)

// ApiloomModule is the module path of apiloom, whose builtin/apis.yaml a
// module without its own is given.
const ApiloomModule = "github.com/apiloom/apiloom"

// Tools are the generators the pipeline builds and runs, as Go package
// paths. A module lists each as a go.mod `tool` directive, which pins its
// version and keeps go.sum complete for building it.
var Tools = []string{
	"k8s.io/code-generator/cmd/deepcopy-gen",
	"k8s.io/code-generator/cmd/register-gen",
	"k8s.io/code-generator/cmd/conversion-gen",
	"k8s.io/code-generator/cmd/client-gen",
	"k8s.io/code-generator/cmd/lister-gen",
	"k8s.io/code-generator/cmd/informer-gen",
	"k8s.io/code-generator/cmd/applyconfiguration-gen",
	// go-to-protobuf runs protoc (which must be on PATH), which runs
	// protoc-gen-gogo; go-to-protobuf then runs goimports on its output.
	"k8s.io/code-generator/cmd/go-to-protobuf",
	"k8s.io/code-generator/cmd/go-to-protobuf/protoc-gen-gogo",
	"golang.org/x/tools/cmd/goimports",
	"k8s.io/kube-openapi/cmd/openapi-gen",
	ApiloomModule + "/codegen/cmd/apiserver-gen",
}

// Sentinel errors.
var (
	// ErrNoModule is returned when no go.mod is found from the working
	// directory up.
	ErrNoModule = errors.New("pipeline: no go.mod in this directory or any parent")
	// ErrNoAPIs is returned when the module has no API packages.
	ErrNoAPIs = errors.New("pipeline: no API packages")
	// ErrStale is returned by Verify when generating would change a file.
	ErrStale = errors.New("pipeline: generated code is stale")
)

// Config says where a module's inputs and outputs are. Zero values take
// the defaults Complete documents.
type Config struct {
	// Root is the module's root directory, the one holding go.mod.
	// Default: the nearest go.mod from the working directory up.
	Root string
	// APIsDir holds the API packages, apis/<group>/<version>, relative to
	// Root. Default "apis".
	APIsDir string
	// OutputDir receives clientset, listers, informers, apply
	// configurations, OpenAPI definitions and the server wiring, relative
	// to Root. Default "generated". It is deleted and written anew.
	OutputDir string
	// HooksDir holds the kinds' hooks, hooks/<group>/<version> (package
	// server/hook, docs/hooks.md), relative to Root. Default "hooks"; a
	// module without it has none.
	HooksDir string
	// HeaderFile starts every generated file. Default
	// hack/boilerplate.go.txt under Root if there is one, else no header.
	HeaderFile string
	// BuiltinsFile names the built-in kinds served from k8s.io/api
	// (builtin/apis.yaml). Default builtin/apis.yaml under Root if there
	// is one, else the one in the apiloom module the module requires;
	// "none" serves none.
	BuiltinsFile string
	// Go is the go command. Default "go".
	Go string
	// Log receives progress and the generators' output. Default
	// os.Stderr.
	Log io.Writer
}

// module is what the pipeline knows about the module it runs in.
type module struct {
	cfg Config
	// path is the module path from go.mod.
	path string
	// apiDirs are the API package directories relative to Root, slash
	// separated, sorted ("apis/shop/v1").
	apiDirs []string
	// builtinPkgs are the upstream packages builtin/apis.yaml serves.
	builtinPkgs []string
}

// Complete fills in the defaults of c.
func (c Config) Complete(ctx context.Context) (Config, error) {
	if c.Go == "" {
		c.Go = "go"
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	if c.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, err
		}
		root, err := FindRoot(wd)
		if err != nil {
			return c, err
		}
		c.Root = root
	}
	root, err := filepath.Abs(c.Root)
	if err != nil {
		return c, err
	}
	c.Root = root
	if c.APIsDir == "" {
		c.APIsDir = "apis"
	}
	if c.OutputDir == "" {
		c.OutputDir = "generated"
	}
	if c.HooksDir == "" {
		c.HooksDir = "hooks"
	}
	for _, d := range []string{c.APIsDir, c.OutputDir, c.HooksDir} {
		if filepath.IsAbs(d) || !filepath.IsLocal(d) {
			return c, fmt.Errorf("pipeline: %q must be a directory inside the module, relative to its root", d)
		}
	}
	if c.HeaderFile == "" {
		if p := filepath.Join(c.Root, "hack", "boilerplate.go.txt"); exists(p) {
			c.HeaderFile = p
		}
	}
	if c.BuiltinsFile == "" {
		if p := filepath.Join(c.Root, "builtin", "apis.yaml"); exists(p) {
			c.BuiltinsFile = p
		} else {
			dir, err := goOutput(ctx, c, "list", "-m", "-f", "{{.Dir}}", ApiloomModule)
			if err != nil {
				return c, fmt.Errorf("pipeline: finding the apiloom module for its builtin/apis.yaml: %w", err)
			}
			c.BuiltinsFile = filepath.Join(strings.TrimSpace(dir), "builtin", "apis.yaml")
		}
	}
	return c, nil
}

// FindRoot returns the nearest directory from dir up that holds a go.mod.
func FindRoot(dir string) (string, error) {
	for d := dir; ; {
		if exists(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ErrNoModule
		}
		d = parent
	}
}

// groupNameLine is the package marker that makes a directory under apis/
// an API package.
var groupNameLine = regexp.MustCompile(`(?m)^// \+groupName=`)

// loadModule reads the module path, the API packages and the built-in
// kinds' packages.
func loadModule(cfg Config) (*module, error) {
	data, err := os.ReadFile(filepath.Join(cfg.Root, "go.mod"))
	if err != nil {
		return nil, err
	}
	m := &module{cfg: cfg, path: modfile.ModulePath(data)}
	if m.path == "" {
		return nil, fmt.Errorf("pipeline: %s has no module line", filepath.Join(cfg.Root, "go.mod"))
	}
	docs, err := filepath.Glob(filepath.Join(cfg.Root, cfg.APIsDir, "*", "*", "doc.go"))
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
		src, err := os.ReadFile(doc)
		if err != nil {
			return nil, err
		}
		if !groupNameLine.Match(src) {
			continue
		}
		rel, err := filepath.Rel(cfg.Root, filepath.Dir(doc))
		if err != nil {
			return nil, err
		}
		m.apiDirs = append(m.apiDirs, filepath.ToSlash(rel))
	}
	sort.Strings(m.apiDirs)
	if len(m.apiDirs) == 0 {
		return nil, fmt.Errorf("%w under %s/ (%s/<group>/<version>/doc.go with +groupName; `go tool loom create api` writes one)", ErrNoAPIs, cfg.APIsDir, cfg.APIsDir)
	}
	if cfg.BuiltinsFile != "none" {
		if m.builtinPkgs, err = readBuiltinPackages(cfg.BuiltinsFile); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// readBuiltinPackages returns the upstream packages a builtin/apis.yaml
// serves kinds from.
func readBuiltinPackages(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("pipeline: built-in kinds: %w", err)
	}
	var pkgs []struct {
		Package string `json:"package"`
	}
	if err := yaml.Unmarshal(data, &pkgs); err != nil {
		return nil, fmt.Errorf("pipeline: built-in kinds: %s: %w", file, err)
	}
	out := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		out = append(out, p.Package)
	}
	return out, nil
}

// pkgs returns the API packages' import paths.
func (m *module) pkgs() []string {
	out := make([]string, len(m.apiDirs))
	for i, d := range m.apiDirs {
		out[i] = path.Join(m.path, d)
	}
	return out
}

// outPkg returns the import path of a directory under OutputDir.
func (m *module) outPkg(elem ...string) string {
	return path.Join(append([]string{m.path, filepath.ToSlash(m.cfg.OutputDir)}, elem...)...)
}

// outDir returns a directory under OutputDir, relative to Root.
func (m *module) outDir(elem ...string) string {
	return filepath.Join(append([]string{m.cfg.OutputDir}, elem...)...)
}

// goOutput runs the go command in cfg.Root and returns its standard output.
func goOutput(ctx context.Context, cfg Config, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cfg.Go, args...)
	cmd.Dir = cfg.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", cfg.Go, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
