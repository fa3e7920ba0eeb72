package markers

import "fmt"

// StreamName is apiloom's marker for a stream subresource, which
// +genclient:method cannot declare: client-gen has no verb for a GET
// answering bytes (as pods/log).
const StreamName = "apiloom:stream"

// Stream is one +apiloom:stream:method=Logs,subresource=logs,input=Opts:
// the hooks method serving it, the path segment, and the type its query
// parameters decode into. Whether the type fits is the generator's
// business.
type Stream struct {
	Method      string // method=, required: the hooks method
	Subresource string // subresource=, required, e.g. "logs"
	Input       string // input=, required: a type name, or path.Type
	// Text is the marker as written, for error messages.
	Text string
}

// ParseStreams reads the +apiloom:stream markers of a type, in the order
// written. Unknown argument keys are warnings.
func ParseStreams(lines []string) ([]Stream, []string, error) {
	ms, err := Find(lines, StreamName)
	if err != nil {
		return nil, nil, err
	}
	var (
		out   []Stream
		warns []string
	)
	for _, m := range ms {
		s := Stream{Text: m.Text}
		for _, a := range m.Args {
			switch a.Key {
			case "method":
				s.Method = a.Value
			case "subresource":
				s.Subresource = a.Value
			case "input":
				s.Input = a.Value
			case "":
				return nil, nil, malformed(m.Text, "expected key=value arguments")
			default:
				warns = append(warns, fmt.Sprintf("%s: ignoring unknown argument %q", m.Text, a.Key))
			}
		}
		for _, req := range []struct{ key, value string }{{"method", s.Method}, {"subresource", s.Subresource}, {"input", s.Input}} {
			if req.value == "" {
				return nil, nil, malformed(m.Text, req.key+" is required")
			}
		}
		out = append(out, s)
	}
	return out, warns, nil
}
