// Package dashboard talks to the Ray dashboard's REST API: the Job Submission
// API (/api/jobs/) that RayJob uses and the Serve API
// (/api/serve/applications/) that RayService uses.
//
// Client is what reconcilers depend on. HTTPClient implements it over HTTP,
// JobInfoCache wraps any Client so that GetJobInfo is answered from a cache
// filled by background pollers (the AsyncJobInfoQuery feature gate), and
// package dashboardtest provides an in-process fake for controller tests.
// Reconcilers receive a ClientProvider rather than a Client, because each
// RayCluster has its own dashboard address.
package dashboard
