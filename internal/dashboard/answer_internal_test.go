package dashboard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestJSONContainers(t *testing.T) {
	for in, want := range map[string]int{
		``:                               0,
		`[]`:                             1,
		`[{}, {"a": [1, 2]}]`:            4,
		`{"a": "{[not counted]}"}`:       1,
		`{"a": "a \" {[ quoted"}`:        1,
		`{"a": "ends with \\", "b": {}}`: 2,
		`"\\\"{"`:                        0,
	} {
		if got := jsonContainers([]byte(in)); got != want {
			t.Errorf("jsonContainers(%s) = %d, want %d", in, got, want)
		}
	}
}

// TestAnswerBudget: while other large answers hold the whole answer
// budget, a large answer waits at most the client's timeout and is then
// refused, saying why; a small one is read at once. Every call gives its
// share back.
func TestAnswerBudget(t *testing.T) {
	large := `{"logs": "` + strings.Repeat("x", 4*freeAnswerBytes) + `"}`
	small := `{"logs": "hello"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "large") {
			_, _ = w.Write([]byte(large))
			return
		}
		_, _ = w.Write([]byte(small))
	}))
	t.Cleanup(srv.Close)
	c, err := NewHTTPClient(srv.URL, "", WithHTTPClient(&http.Client{Timeout: 200 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}

	if !answerBudget.TryAcquire(answerBudgetBytes) {
		t.Fatal("the answer budget is in use")
	}
	_, err = c.GetJobLog(t.Context(), "large")
	if !errors.Is(err, ErrAnswerTooLarge) || !strings.Contains(err.Error(), "no room within 200ms to read it while other large answers are read") {
		t.Errorf("large answer with the budget in use: %v, want a refusal for want of room", err)
	}
	if logs, err := c.GetJobLog(t.Context(), "small"); err != nil || logs != "hello" {
		t.Errorf("small answer with the budget in use: %q, %v", logs, err)
	}
	answerBudget.Release(answerBudgetBytes)

	if logs, err := c.GetJobLog(t.Context(), "large"); err != nil || len(logs) != 4*freeAnswerBytes {
		t.Errorf("large answer: %d bytes, %v", len(logs), err)
	}
	if !answerBudget.TryAcquire(answerBudgetBytes) {
		t.Fatal("a call kept part of the answer budget")
	}
	answerBudget.Release(answerBudgetBytes)
}
