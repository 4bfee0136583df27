//go:build ignore

// Command dump prints, as an OpenAPI v2 document, the definitions that
// openapi-gen wrote into a file beside it (GetOpenAPIDefinitions), named
// as applyconfiguration-gen looks them up (io.k8s.api.core.v1.PodSpec,
// com.github.ray-operator.ray-operator.api.ray.v1.RayJob). hack/client-gen.sh
// copies it next to the generated file and runs both; it is not built
// otherwise (the ignore constraint), as it needs that file.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func main() {
	ref := func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + util.ToRESTFriendlyName(name))
	}
	defs := GetOpenAPIDefinitions(ref)
	schemas := make(map[string]spec.Schema, len(defs))
	for name, def := range defs {
		schema := def.Schema
		// Types whose v3 schema differs keep their v2 one in an extension.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			schema = v2
		}
		schemas[util.ToRESTFriendlyName(name)] = schema
	}
	doc := spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "ray.io/v1 and the Kubernetes types it embeds", Version: "v1"}},
		Definitions: schemas,
	}}
	if err := json.NewEncoder(os.Stdout).Encode(doc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
