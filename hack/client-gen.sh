#!/usr/bin/env bash
# Regenerates the typed Go client of the ray.io/v1 API under pkg/client with
# k8s.io/code-generator's generators, found in the directory given as the
# first argument, and kube-openapi's openapi-gen, the second argument (the
# Makefile installs both at pinned versions):
#   applyconfiguration/       apply configurations for server-side apply
#   clientset/versioned/      the clientset (and its fake)
#   listers/                  listers over informer caches
#   informers/externalversions/  shared informer factory
# The old tree is removed first so that a deleted kind leaves nothing behind.
set -euo pipefail
bin="$1"
openapi_gen="$2"
cd "$(dirname "$0")/.."

module="$(go list -m)"
api="${module}/api/ray/v1"
out=pkg/client
pkg="${module}/${out}"
# No license header: the generators still add their "Code generated" line.
header=/dev/null

# The apply configurations embed a structured-merge-diff schema of the types
# they build, from an OpenAPI v2 document: with it the generator writes the
# Extract<Kind> helpers (the fields a manager owns, for extract-modify-apply)
# and the fake clientset's Apply can merge as the API server does. openapi-gen
# writes the definitions of the API and of the Kubernetes packages it embeds
# as Go code, in a package inside the module so that it can import them;
# hack/openapi-schema/dump.go turns them into the document.
tmp="$(mktemp -d hack/openapi-schema/tmp.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
"$openapi_gen" --go-header-file "$header" \
	--output-dir "$tmp" --output-pkg "${module}/${tmp}/main" --output-file zz_generated.openapi.go \
	--report-filename "$tmp/api-rule-violations.txt" \
	"$api" k8s.io/api/core/v1 k8s.io/api/networking/v1 \
	k8s.io/apimachinery/pkg/apis/meta/v1 k8s.io/apimachinery/pkg/api/resource \
	k8s.io/apimachinery/pkg/util/intstr k8s.io/apimachinery/pkg/runtime
cp hack/openapi-schema/dump.go "$tmp/"
go run "$tmp/dump.go" "$tmp/zz_generated.openapi.go" >"$tmp/openapi.json"

rm -rf "${out:?}/applyconfiguration" "${out}/clientset" "${out}/listers" "${out}/informers"

# Every Kubernetes struct the API embeds is built with client-go's own apply
# configuration (all fields optional), not the API struct, whose zero values
# would be sent as fields the applier sets. pkg/client's
# TestEmbeddedKubernetesStructsUseApplyConfigurations fails on a struct
# missing here.
external=()
for t in PodTemplateSpec Service EnvVar EnvVarSource EnvFromSource ObjectReference ResourceRequirements SecurityContext VolumeMount; do
	external+=("k8s.io/api/core/v1.${t}:k8s.io/client-go/applyconfigurations/core/v1")
done
for t in IngressTLS NetworkPolicyIngressRule NetworkPolicyEgressRule; do
	external+=("k8s.io/api/networking/v1.${t}:k8s.io/client-go/applyconfigurations/networking/v1")
done

"$bin/applyconfiguration-gen" --go-header-file "$header" \
	--openapi-schema "$tmp/openapi.json" \
	--output-dir "${out}/applyconfiguration" --output-pkg "${pkg}/applyconfiguration" \
	--external-applyconfigurations "$(IFS=,; echo "${external[*]}")" \
	"$api"

"$bin/client-gen" --go-header-file "$header" \
	--clientset-name versioned --input-base "" --input "$api" \
	--output-dir "${out}/clientset" --output-pkg "${pkg}/clientset" \
	--apply-configuration-package "${pkg}/applyconfiguration"

"$bin/lister-gen" --go-header-file "$header" \
	--output-dir "${out}/listers" --output-pkg "${pkg}/listers" \
	"$api"

"$bin/informer-gen" --go-header-file "$header" \
	--versioned-clientset-package "${pkg}/clientset/versioned" \
	--listers-package "${pkg}/listers" \
	--output-dir "${out}/informers" --output-pkg "${pkg}/informers" \
	"$api"
