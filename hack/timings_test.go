package hack_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Events as `go test -json` writes them: a test that fails with its
// message among log lines, a subtest that fails with a message that names
// no error (its parent fails too), a passing test, and a package that hit
// -timeout while a test still ran.
const failingRecord = `{"Action":"run","Package":"ex/a","Test":"TestFails"}
{"Action":"output","Package":"ex/a","Test":"TestFails","Output":"=== RUN   TestFails\n"}
{"Action":"output","Package":"ex/a","Test":"TestFails","Output":"    a_test.go:4: waiting for pod\n"}
{"Action":"output","Package":"ex/a","Test":"TestFails","Output":"    a_test.go:9: pod \"x\" never ready:\ttimeout\n"}
{"Action":"output","Package":"ex/a","Test":"TestFails","Output":"--- FAIL: TestFails (0.00s)\n"}
{"Action":"fail","Package":"ex/a","Test":"TestFails","Elapsed":0}
{"Action":"output","Package":"ex/a","Test":"TestSub/inner_case","Output":"    a_test.go:5: first\n"}
{"Action":"fail","Package":"ex/a","Test":"TestSub/inner_case","Elapsed":0}
{"Action":"fail","Package":"ex/a","Test":"TestSub","Elapsed":0}
{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0}
{"Action":"fail","Package":"ex/a","Elapsed":0.004}
{"Action":"output","Package":"ex/b","Test":"TestHang","Output":"panic: test timed out after 3s\n"}
{"Action":"output","Package":"ex/b","Test":"TestHang","Output":"\trunning tests:\n"}
{"Action":"output","Package":"ex/b","Test":"TestHang","Output":"\t\tTestHang (3s)\n"}
{"Action":"fail","Package":"ex/b","Elapsed":3.02}
`

func runFailures(t *testing.T, record, json string) string {
	t.Helper()
	dir := t.TempDir()
	jsonDir := filepath.Join(dir, "json")
	if err := os.Mkdir(jsonDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if json != "" {
		if err := os.WriteFile(filepath.Join(jsonDir, "stage.json"), []byte(json), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recordFile := filepath.Join(dir, "record.tsv")
	if err := os.WriteFile(recordFile, []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "timings.sh", "failures")
	cmd.Env = append(os.Environ(), "RAY_OPERATOR_TIMINGS="+recordFile, "RAY_OPERATOR_TEST_JSON="+jsonDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("timings.sh failures: %v\n%s", err, out)
	}
	return string(out)
}

func TestFailuresNameWhatFailed(t *testing.T) {
	got := runFailures(t, "stage\tlint\t3.0\t2\nstage\ttest-unit\t9.1\t0\n", failingRecord)
	want := `== What failed (each test's whole output: the records named above)
  stage lint: exit 2
  FAIL ex/a TestFails
       a_test.go:9: pod "x" never ready: timeout
  FAIL ex/a TestSub/inner_case
       a_test.go:5: first
  FAIL ex/b: panic: test timed out after 3s; running: TestHang (3s)
`
	if got != want {
		t.Errorf("failures printed\n%s\nwant\n%s", got, want)
	}
}

func TestFailuresSayNothingWhenAllPassed(t *testing.T) {
	passing := `{"Action":"pass","Package":"ex/a","Test":"TestOK","Elapsed":0}
{"Action":"pass","Package":"ex/a","Elapsed":0.1}
`
	if got := runFailures(t, "stage\ttest-unit\t9.1\t0\n", passing); strings.TrimSpace(got) != "" {
		t.Errorf("all passed, but failures printed %q", got)
	}
}
