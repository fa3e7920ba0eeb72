package apiserver

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/apiloom/apiloom/server/endpoints/request"
)

func TestStrategicMergePatchMaxListElementsFlag(t *testing.T) {
	parse := func(args ...string) (Options, error) {
		o := DefaultOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return o, o.Validate()
	}
	if o, err := parse(); err != nil || o.StrategicMergePatchMaxListElements != request.DefaultStrategicMergePatchMaxListElements {
		t.Fatalf("default: %d, %v", o.StrategicMergePatchMaxListElements, err)
	}
	if o, err := parse("--strategic-merge-patch-max-list-elements=0"); err != nil || o.StrategicMergePatchMaxListElements != 0 {
		t.Fatalf("no limit: %d, %v", o.StrategicMergePatchMaxListElements, err)
	}
	if _, err := parse("--strategic-merge-patch-max-list-elements=-1"); err == nil || !strings.Contains(err.Error(), "--strategic-merge-patch-max-list-elements") {
		t.Fatalf("negative: %v", err)
	}
}
