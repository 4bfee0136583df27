// Package fuzz holds the native Go fuzz targets that cross packages: a
// spec goes through validation and, when accepted, through every builder
// the controllers would run on it. The targets check properties, not only
// the absence of panics:
//
//   - a spec that validation accepts always builds;
//   - building is deterministic;
//   - a built Pod is valid (podcheck) whenever the user's template is;
//   - every rejection names a field of the API.
//
// The seed corpus is config/samples plus testdata/fuzz; `go test` runs it
// as ordinary tests, `make fuzz` fuzzes each target for FUZZTIME.
package fuzz
