package generators

import (
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

	"k8s.io/gengo/v2/namer"

	"github.com/apiloom/apiloom/server/resource"
)

// client-gen cannot write a stream's client method (it has no verb for a
// GET answering bytes), but it leaves a kind's <kind>_expansion.go alone
// and then declares no empty <Kind>Expansion interface of its own. So,
// as client-go's hand-written pods' GetLogs, each kind with a stream gets
// its expansion written here, before client-gen runs: the interface with
// one method per stream returning the request (Stream(ctx) reads it),
// the method on client-gen's client type, and the fake clientset's, which
// records the call and answers "fake <subresource>" or what a reactor
// returns as a *runtime.Unknown.

// expansionTemplate is the typed client's <kind>_expansion.go.
var expansionTemplate = template.Must(template.New("expansion").Parse(`{{.Header}}
package {{.Version}}

import (
{{- range $p, $a := .Imports}}
	{{$a}} "{{$p}}"
{{- end}}
	scheme "{{.ClientsetPkg}}/scheme"
	rest "k8s.io/client-go/rest"
)

// {{.Kind}}Expansion has the {{.Kind}} client's methods client-gen cannot
// write: the requests of the kind's streams (+apiloom:stream).
type {{.Kind}}Expansion interface {
{{- range .Streams}}
	// {{.Method}} is the GET of the {{.Name}} stream of the {{$.Kind}} name;
	// Stream(ctx) reads it.
	{{.Method}}(name string, opts *{{.Opts}}) *rest.Request
{{- end}}
}
{{range .Streams}}
// {{.Method}} is the GET of the {{.Name}} subresource of the {{$.Kind}} name,
// opts being its query parameters.
func (c *{{$.PrivatePlural}}) {{.Method}}(name string, opts *{{.Opts}}) *rest.Request {
	return c.GetClient().Get().
{{- if $.Namespaced}}
		Namespace(c.GetNamespace()).
{{- end}}
		Resource({{printf "%q" $.Plural}}).
		Name(name).
		SubResource({{printf "%q" .Name}}).
		VersionedParams(opts, scheme.ParameterCodec)
}
{{end}}`))

// fakeExpansionTemplate is the fake client's fake_<kind>_expansion.go.
var fakeExpansionTemplate = template.Must(template.New("fake").Parse(`{{.Header}}
package fake

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

{{range $p, $a := .Imports}}	{{$a}} "{{$p}}"
{{end}}	scheme "{{.ClientsetPkg}}/scheme"
	runtime "k8s.io/apimachinery/pkg/runtime"
	rest "k8s.io/client-go/rest"
	fakerest "k8s.io/client-go/rest/fake"
	testing "k8s.io/client-go/testing"
)
{{range .Streams}}
// {{.Method}} records a get of the {{.Name}} subresource and returns a
// request whose body is "fake {{.Name}}", or the Raw of the
// *runtime.Unknown a reactor returns.
func (c *fake{{$.PublicPlural}}) {{.Method}}(name string, opts *{{.Opts}}) *rest.Request {
	action := testing.GenericActionImpl{}
	action.Verb = "get"
	action.Namespace = c.Namespace()
	action.Resource = c.Resource()
	action.Subresource = {{printf "%q" .Name}}
	action.Value = opts
	body := []byte({{printf "%q" (printf "fake %s" .Name)}})
	obj, err := c.Fake.Invokes(action, &runtime.Unknown{Raw: body})
	if err == nil {
		if u, ok := obj.(*runtime.Unknown); ok && u != nil {
			body = u.Raw
		} else {
			err = fmt.Errorf("fake {{$.PublicPlural}}.{{.Method}}: a reactor returned %T, not *runtime.Unknown", obj)
		}
	}
	path := "/apis/" + c.Kind().GroupVersion().String()
	if c.Kind().Group == "" {
		path = "/api/" + c.Kind().Version
	}
	if ns := c.Namespace(); ns != "" {
		path += "/namespaces/" + ns
	}
	client := &fakerest.RESTClient{
		Client: fakerest.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
			if err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body))}, nil
		}),
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         c.Kind().GroupVersion(),
		VersionedAPIPath:     path + "/{{$.Plural}}/" + name + "/{{.Name}}",
	}
	return client.Request()
}
{{end}}`))

// expansionStream is one stream method of an expansion.
type expansionStream struct {
	Method, Name string
	// Opts is the options type as the file names it (alias.Type).
	Opts string
}

// expansionData fills the expansion templates for one kind.
type expansionData struct {
	Header, Version, Kind, Plural string
	PrivatePlural, PublicPlural   string
	Namespaced                    bool
	// Imports are the options types' packages: alias by path.
	Imports      map[string]string
	ClientsetPkg string
	Streams      []expansionStream
}

// writeClientExpansions writes the expansion files of every kind with a
// stream into the typed packages of the clientset in dir (import path
// pkg), as client-gen names them: typed/<group dir>/<version>.
func writeClientExpansions(dir, pkg string, header []byte, pluralExceptions map[string]string, gvs []*groupVersion) error {
	private := namer.NewPrivatePluralNamer(pluralExceptions)
	public := namer.NewPublicPluralNamer(pluralExceptions)
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			d := expansionData{
				Header: string(header), Version: gv.Version, Kind: r.Kind, Plural: r.Plural,
				PrivatePlural: private.Name(r.Type), PublicPlural: public.Name(r.Type),
				Namespaced: r.Namespaced, Imports: map[string]string{}, ClientsetPkg: pkg,
			}
			for _, c := range r.Custom {
				if c.Type != resource.Stream {
					continue
				}
				p := c.Input.Name.Package
				if d.Imports[p] == "" {
					alias := strings.ToLower(path.Base(path.Dir(p)) + path.Base(p))
					if p == gv.Pkg.Path {
						alias = strings.ToLower(gv.GroupDir + gv.Version)
					}
					if slices.Contains(slices.Collect(maps.Values(d.Imports)), alias) {
						alias += fmt.Sprint(len(d.Imports))
					}
					d.Imports[p] = alias
				}
				alias := d.Imports[p]
				d.Streams = append(d.Streams, expansionStream{Method: c.Method, Name: c.Name, Opts: alias + "." + c.Input.Name.Name})
			}
			if len(d.Streams) == 0 {
				continue
			}
			typed := filepath.Join(dir, "typed", strings.ToLower(gv.GroupDir), strings.ToLower(gv.Version))
			file := strings.ToLower(r.Kind) + "_expansion.go"
			if err := writeGo(filepath.Join(typed, file), expansionTemplate, d); err != nil {
				return err
			}
			if err := writeGo(filepath.Join(typed, "fake", "fake_"+file), fakeExpansionTemplate, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeGo executes t with d and writes the formatted result to file.
func writeGo(file string, t *template.Template, d any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("%s: formatting the generated code: %w", file, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, src, 0o644)
}
