package dashboard

// SetAfterPoll makes c call f after each background poll, so that tests in
// package dashboard_test can wait for polls instead of sleeping. Call it
// before Start.
func SetAfterPoll(c *JobInfoCache, f func(jobID string, again bool)) {
	c.afterPoll = func(key cacheKey, again bool) { f(key.jobID, again) }
}
