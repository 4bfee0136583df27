// Package wrappers builds API objects for tests with fluent wrappers, as
// kubernetes-sigs/jobset and kueue do: MakeX(name, namespace) returns a
// wrapper holding a small valid object, each method changes it and returns
// the wrapper, and Obj returns a deep copy of the object, so one wrapper can
// hand out several independent objects.
//
//	rs := wrappers.MakeRayService("svc", "ns").
//		UpgradeType(rayv1.RayServiceNewCluster).
//		ActiveCluster("svc-abcde").
//		Obj()
//
// The defaults are the smallest objects the operator's validation accepts
// (see the package test); methods set one thing each and never read the
// clock, so tests stay exact. There are no package-level objects.
package wrappers
