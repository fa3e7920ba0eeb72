package main

import (
	"bytes"
	"context"
	"fmt"
	goversion "go/version"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"golang.org/x/mod/modfile"

	"github.com/apiloom/apiloom/codegen/pipeline"
)

// zeroVersion is the version go.mod requires a module at when a replace
// directive gives it (what `go mod tidy` writes).
const zeroVersion = "v0.0.0-00010101000000-000000000000"

// defaultGoVersion is the go directive of a module requiring a published
// apiloom; a local checkout's own go directive is used otherwise.
const defaultGoVersion = "1.26.0"

// initData is what the templates of `loom init` are rendered with.
type initData struct {
	Module string
	// Name is the module path's last element, the project's name.
	Name string
	// DeployName is Name as a Kubernetes name: the default of loom
	// manifests' --name, and of the image make image tags.
	DeployName string
	// ApiloomDir is the local checkout a replace directive points at;
	// empty when ApiloomVersion is a published version.
	ApiloomDir     string
	ApiloomVersion string
	GoVersion      string
	// GoImageVersion is GoVersion's language version (1.26 of 1.26.0),
	// the Dockerfile's golang image tag: its newest patch release.
	GoImageVersion string
	// Tools are the go.mod tool directives: every generator apiloom-gen
	// runs, apiloom-gen itself and loom.
	Tools []string
}

func runInit(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
	var (
		modPath, apiloomDir string
		force               bool
	)
	fs := pflag.NewFlagSet("loom init", pflag.ContinueOnError)
	fs.StringVar(&modPath, "module", "", "the new module's path, e.g. example.com/shop")
	fs.StringVar(&apiloomDir, "apiloom", "", "a local apiloom checkout to build against (a go.mod replace directive); "+
		"needed until apiloom is published to a module proxy")
	fs.BoolVar(&force, "force", false, "write into a directory that is not empty, over files of the same names")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}

	// Every check before any write.
	if err := checkModulePath(modPath); err != nil {
		return err
	}
	data := initData{Module: modPath, Name: path.Base(modPath), DeployName: deployName(modPath)}
	if err := resolveApiloom(&data, apiloomDir); err != nil {
		return err
	}
	if !force {
		if err := checkEmpty(dir); err != nil {
			return err
		}
	}
	files, err := initFiles(&data)
	if err != nil {
		return err
	}
	if err := writeFiles(dir, files, stdout); err != nil {
		return err
	}

	// go.sum, and the requirements the tools and the server need. -e: the
	// generated packages the server imports do not exist before `make
	// generate`.
	cmd := exec.CommandContext(ctx, "go", "mod", "tidy", "-e")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the files are written, but go mod tidy failed (%v): run it again once the module cache or proxy can be reached:\n%s", err, out.String())
	}
	fmt.Fprintf(stdout, "\nNext: go tool loom create api --group <group> --version v1 --kind <Kind>, then make generate (see README.md)\n")
	return nil
}

// initFiles completes data (the tools, the Go image) and renders the
// files of a new module with it.
func initFiles(data *initData) ([]file, error) {
	data.Tools = append(slices.Clone(pipeline.Tools),
		pipeline.ApiloomModule+"/codegen/cmd/apiloom-gen", pipeline.ApiloomModule+"/cmd/loom")
	slices.Sort(data.Tools)
	data.GoImageVersion = strings.TrimPrefix(goversion.Lang("go"+data.GoVersion), "go")

	var files []file
	for _, f := range []struct{ path, tmpl string }{
		{"go.mod", "go.mod.tmpl"},
		{"Makefile", "Makefile.tmpl"},
		{"README.md", "README.md.tmpl"},
		{".gitignore", "gitignore.tmpl"},
		{"Dockerfile", "Dockerfile.tmpl"},
		{".dockerignore", "dockerignore.tmpl"},
		{"apis/doc.go", "apis_doc.go.tmpl"},
		{"cmd/apiserver/main.go", "main.go.tmpl"},
		{"test/server_test.go", "server_test.go.tmpl"},
	} {
		out, err := render(f.path, f.tmpl, data)
		if err != nil {
			return nil, err
		}
		files = append(files, out)
	}
	return files, nil
}

// resolveApiloom decides which apiloom the module requires: the local
// checkout dir, or else the one loom itself was built from, if it is a
// published version or a local checkout by absolute path.
func resolveApiloom(data *initData, dir string) error {
	if dir == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			dir, data.ApiloomVersion = apiloomOf(bi)
		}
		if dir == "" && data.ApiloomVersion == "" {
			return usageErrorf("--apiloom is required: apiloom is not published to a module proxy yet, so the new module builds against a local checkout; give its path")
		}
		if dir == "" {
			data.GoVersion = defaultGoVersion
			return nil
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return usageErrorf("invalid --apiloom %q: %v", dir, err)
	}
	gomod, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return usageErrorf("invalid --apiloom %q: it must be an apiloom checkout, a directory whose go.mod says module %s (%v)", dir, pipeline.ApiloomModule, err)
	}
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil || f.Module == nil || f.Module.Mod.Path != pipeline.ApiloomModule {
		return usageErrorf("invalid --apiloom %q: it must be an apiloom checkout, a directory whose go.mod says module %s", dir, pipeline.ApiloomModule)
	}
	data.ApiloomDir, data.ApiloomVersion, data.GoVersion = abs, zeroVersion, defaultGoVersion
	if f.Go != nil {
		data.GoVersion = f.Go.Version
	}
	return nil
}

// apiloomOf returns the apiloom a loom binary was built from: a local
// directory (an absolute replace), or a published version.
func apiloomOf(bi *debug.BuildInfo) (dir, version string) {
	mods := append([]*debug.Module{&bi.Main}, bi.Deps...)
	for _, m := range mods {
		if m.Path != pipeline.ApiloomModule {
			continue
		}
		if r := m.Replace; r != nil {
			if r.Version == "" && filepath.IsAbs(r.Path) {
				return r.Path, ""
			}
			return "", ""
		}
		if m.Version != "" && m.Version != "(devel)" && m.Version != zeroVersion {
			return "", m.Version
		}
	}
	return "", ""
}

// checkEmpty refuses a directory with anything in it but .git.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return usageErrorf("cannot read directory %s: %v", dir, err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			return usageErrorf("directory %s is not empty (it has %s): init writes a new module into an empty directory; --force writes over files of the same names", dir, e.Name())
		}
	}
	return nil
}
