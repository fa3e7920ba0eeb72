package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
)

// Verify fails with ErrStale, listing the files, when Generate would
// change anything under APIsDir or OutputDir. It generates into a scratch
// copy of the module, so the module is never touched, not even by a
// failed or interrupted run.
func Verify(ctx context.Context, cfg Config) error {
	cfg, err := cfg.Complete(ctx)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "apiloom-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if err := copyModule(cfg.Root, scratch); err != nil {
		return err
	}
	sc := cfg
	sc.Root = scratch
	sc.Log = io.Discard
	if err := Generate(ctx, sc); err != nil {
		return err
	}
	var diffs []string
	for _, d := range []string{cfg.APIsDir, cfg.OutputDir} {
		ds, err := diffTrees(filepath.Join(cfg.Root, d), filepath.Join(scratch, d), d)
		if err != nil {
			return err
		}
		diffs = append(diffs, ds...)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w; run `make generate` and commit:\n  %s", ErrStale, strings.Join(diffs, "\n  "))
	}
	return nil
}

// copyModule copies the regular files of the module at root into dst,
// leaving out what is not source: directories whose name starts with "."
// (.git, a server's data directory) and bin/. Local replace directives are
// made absolute, so the copy builds against the same checkouts.
func copyModule(root, dst string) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || rel == "bin") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		return err
	}
	return absReplaces(filepath.Join(dst, "go.mod"), root)
}

// absReplaces rewrites the local replace directives of the go.mod at
// file, relative to dir, as absolute paths.
func absReplaces(file, dir string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		return err
	}
	changed := false
	for _, r := range f.Replace {
		if r.New.Version != "" || !modfile.IsDirectoryPath(r.New.Path) || filepath.IsAbs(r.New.Path) {
			continue
		}
		if err := f.AddReplace(r.Old.Path, r.Old.Version, filepath.Join(dir, r.New.Path), ""); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, 0o644)
}

// diffTrees lists, relative to name, the files that differ between the
// trees a (the module) and b (freshly generated).
func diffTrees(a, b, name string) ([]string, error) {
	fa, err := treeFiles(a)
	if err != nil {
		return nil, err
	}
	fb, err := treeFiles(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for p, da := range fa {
		db, ok := fb[p]
		switch {
		case !ok:
			out = append(out, filepath.Join(name, p)+": not generated any more")
		case !bytes.Equal(da, db):
			out = append(out, filepath.Join(name, p)+": differs")
		}
	}
	for p := range fb {
		if _, ok := fa[p]; !ok {
			out = append(out, filepath.Join(name, p)+": missing")
		}
	}
	sort.Strings(out)
	return out, nil
}

// treeFiles reads every regular file under dir, by relative path; a
// missing dir is an empty tree.
func treeFiles(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel] = data
		return nil
	})
	return files, err
}
