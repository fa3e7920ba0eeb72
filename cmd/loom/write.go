package main

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/template"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").ParseFS(templateFS, "templates/*.tmpl"))

// file is one file a command writes: its path relative to the directory
// it runs in, and its content.
type file struct {
	path string
	data []byte
	// private: the file holds a private key, readable by its owner only.
	private bool
}

// render executes the named template with data into a file at path.
func render(path, name string, data any) (file, error) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		return file{}, fmt.Errorf("rendering %s: %w", path, err)
	}
	return file{path: path, data: b.Bytes()}, nil
}

// writeFiles writes files under dir, reporting each to out. It is called
// only once every check has passed.
func writeFiles(dir string, files []file, out io.Writer) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if f.private {
			mode = 0o600
		}
		if err := os.WriteFile(p, f.data, mode); err != nil {
			return err
		}
		// WriteFile keeps an existing file's mode.
		if f.private {
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
		}
		fmt.Fprintln(out, "wrote", f.path)
	}
	return nil
}
