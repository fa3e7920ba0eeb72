package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apiloom/apiloom/internal/testenv"
)

// readmeSection is the text of the README's section titled title, up to
// the next "## " heading.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\n## "+title+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", title)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// fencedBlocks are the contents of a section's fenced code blocks of the
// given language, in order.
func fencedBlocks(section, lang string) []string {
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// TestReadmeFirstObject runs the README's "A first object" commands, as
// written, from the repository's root against bin/apiloom, and compares
// what the first two print with the README's (the AGE column aside).
func TestReadmeFirstObject(t *testing.T) {
	requireKubectl(t)
	section := readmeSection(t, "A first object")
	commands, outputs := fencedBlocks(section, "sh"), fencedBlocks(section, "text")
	if len(commands) != 1 || len(outputs) != 1 {
		t.Fatalf("want one sh block and one text block in the README's first-object section, got %d and %d", len(commands), len(outputs))
	}
	k := startBinary(t)
	var printed []string
	for i, line := range strings.Split(strings.TrimSpace(commands[0]), "\n") {
		args := strings.Fields(line)
		if len(args) < 3 || args[0] != "kubectl" || args[1] != "--kubeconfig" || args[2] != ".apiloom/kubeconfig" {
			t.Fatalf("README command %q: want kubectl --kubeconfig .apiloom/kubeconfig ...", line)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		c := k.cmd(ctx, args[3:]...) // with the started server's kubeconfig
		c.Dir = "../.."
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		cancel()
		if err != nil {
			t.Fatalf("README command %q: %v\n%s%s", line, err, stdout.String(), stderr.String())
		}
		if i < 2 {
			printed = append(printed, strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")...)
		}
	}
	want := strings.Split(strings.TrimRight(outputs[0], "\n"), "\n")
	if len(printed) != len(want) {
		t.Fatalf("the commands printed:\n%s\nthe README shows:\n%s", strings.Join(printed, "\n"), outputs[0])
	}
	for i := range want {
		if g, w := withoutAge(printed[i]), withoutAge(want[i]); g != w {
			t.Errorf("line %d: printed %q, the README shows %q", i+1, printed[i], want[i])
		}
	}
}

// withoutAge is a line's fields, without the last one of a table row
// (kubectl's AGE column, the only one that changes from run to run).
func withoutAge(line string) string {
	f := strings.Fields(line)
	if len(f) > 3 && !strings.HasSuffix(line, " created") {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

// TestMakeRunPassesArgs: make run passes ARGS to the server after its own
// flags (so a later --data-dir wins too), and the README's example names
// a flag the server has.
func TestMakeRunPassesArgs(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		testenv.Unavailable(t, "make not on PATH: %v", err)
	}
	m := regexp.MustCompile(`make run ARGS="([^"]+)"`).FindStringSubmatch(readmeSection(t, "Two commands"))
	if m == nil {
		t.Fatal(`the README's "Two commands" names no make run ARGS="..."`)
	}
	args := m[1]
	out, err := exec.CommandContext(t.Context(), "make", "-n", "-C", "../..", "run", "ARGS="+args).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	if want := "bin/apiloom --data-dir .apiloom " + args + "\n"; !strings.Contains(string(out), want) {
		t.Errorf("make -n run ARGS=%q prints:\n%s\nwant a line %q", args, out, want)
	}
	help, _ := exec.CommandContext(t.Context(), apiloomBinary(t), "--help").CombinedOutput()
	for _, f := range strings.Fields(args) {
		if strings.HasPrefix(f, "--") && !strings.Contains(string(help), "      "+f+" ") {
			t.Errorf("the README's make run ARGS names %s, which apiloom --help does not list:\n%s", f, help)
		}
	}
}
