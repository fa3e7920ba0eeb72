// Command summarize reads the Ginkgo JSON report of a run of the
// conformance suite and says, for each test of the list, whether it
// passed:
//
//	summarize NAMES REPORT.json OUT_DIR
//
// NAMES holds one exact test name a line (tests.txt without its reasons).
// It writes OUT_DIR/summary.txt (PASS, FAIL, SKIP or NOTRUN and the name,
// a line each, then "N passed, M failed") and OUT_DIR/failures.txt (where
// and why each test that did not pass failed), prints the summary's last
// line and every line that is not PASS, and exits 1 unless every listed
// test passed: a skipped test or one that did not run counts as failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// report is the part of Ginkgo's JSON report (types.Report) read here.
type report struct {
	SpecReports []struct {
		ContainerHierarchyTexts []string
		LeafNodeText            string
		LeafNodeType            string
		State                   string
		Failure                 struct {
			Message  string
			Location struct {
				FileName   string
				LineNumber int
			}
		}
	}
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: summarize NAMES REPORT.json OUT_DIR")
		os.Exit(2)
	}
	names, err := readLines(os.Args[1])
	if err != nil {
		fail(err)
	}
	type result struct{ state, why string }
	results := map[string]result{}
	var reports []report
	if data, err := os.ReadFile(os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "no Ginkgo report (%v): every test counts as not run\n", err)
	} else if err := json.Unmarshal(data, &reports); err != nil {
		fail(fmt.Errorf("%s: %w", os.Args[2], err))
	}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != "It" {
				continue
			}
			name := strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " ")
			why := ""
			if s.State != "passed" {
				why = fmt.Sprintf("%s:%d: %s", s.Failure.Location.FileName, s.Failure.Location.LineNumber, oneLine(s.Failure.Message, 600))
			}
			results[name] = result{s.State, why}
		}
	}

	var summary, failures strings.Builder
	passed, failed := 0, 0
	for _, n := range names {
		res, ok := results[n]
		word := "NOTRUN"
		switch {
		case !ok:
		case res.state == "passed":
			word = "PASS"
		case res.state == "skipped" || res.state == "pending":
			word = "SKIP"
		default:
			word = "FAIL"
		}
		if word == "PASS" {
			passed++
		} else {
			failed++
			fmt.Fprintf(&failures, "%s %s\n    %s\n", word, n, res.why)
		}
		fmt.Fprintf(&summary, "%s %s\n", word, n)
	}
	last := fmt.Sprintf("%d passed, %d failed", passed, failed)
	summary.WriteString(last + "\n")
	out := os.Args[3]
	for file, text := range map[string]string{"summary.txt": summary.String(), "failures.txt": failures.String()} {
		if err := os.WriteFile(filepath.Join(out, file), []byte(text), 0o644); err != nil {
			fail(err)
		}
	}
	for line := range strings.SplitSeq(summary.String(), "\n") {
		if line != "" && !strings.HasPrefix(line, "PASS ") && line != last {
			fmt.Println(line)
		}
	}
	fmt.Println(last)
	if failed > 0 {
		os.Exit(1)
	}
}

// readLines returns the non-empty lines of the file at name.
func readLines(name string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// oneLine is msg with its white space folded, cut to n bytes.
func oneLine(msg string, n int) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > n {
		return msg[:n] + "..."
	}
	return msg
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "summarize:", err)
	os.Exit(2)
}
