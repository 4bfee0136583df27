package dashboard

import (
	"errors"
	"fmt"
	"net/http"
)

var (
	// ErrNotFound matches errors for a job the dashboard does not know (HTTP
	// 404). The RayJob controller resubmits in HTTPMode when it sees it.
	ErrNotFound = errors.New("not found")
	// ErrSubmissionIDInUse matches a submission refused because a job with the
	// same submission id exists, which makes a repeated submit harmless.
	ErrSubmissionIDInUse = errors.New("submission id already in use")
	// ErrAgain is returned by JobInfoCache.GetJobInfo while the job's info is
	// being fetched in the background; the caller should requeue.
	ErrAgain = errors.New("job info not cached yet, try again")
)

// maxErrorBody bounds how much of a response body an error message quotes.
const maxErrorBody = 512

// submissionIDInUseMarker is the text Ray puts in its answer when a
// submission id is taken.
const submissionIDInUseMarker = "Please use a different submission_id"

// HTTPError is a non-2xx answer from the dashboard.
type HTTPError struct {
	Method     string
	Path       string
	StatusCode int
	// Body is the start of the response body, at most maxErrorBody bytes.
	Body string

	submissionIDInUse bool
}

// Error names the request, the status and what the dashboard said.
func (e *HTTPError) Error() string {
	return fmt.Sprintf("ray dashboard %s %s: %d %s: %s",
		e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode), e.Body)
}

// Is lets errors.Is recognise ErrNotFound and ErrSubmissionIDInUse.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrSubmissionIDInUse:
		return e.submissionIDInUse
	}
	return false
}

// snippet returns at most maxErrorBody bytes of body, marking a cut.
func snippet(body []byte) string {
	if len(body) <= maxErrorBody {
		return string(body)
	}
	return string(body[:maxErrorBody]) + "...(truncated)"
}
