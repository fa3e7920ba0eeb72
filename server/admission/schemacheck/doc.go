// Package schemacheck defaults and validates a kind's objects by its
// structural schema (resource.Info.Schema) exactly as kube-apiserver does
// for a CustomResourceDefinition version with the same openAPIV3Schema.
//
// New builds, once per kind at server start, what kube-apiserver builds
// when it starts serving a CRD: the schema is first checked as CRD creation
// checks it (structural, defaults valid and pruned, list types consistent,
// every CEL rule compiling within the static cost limits), then turned into
// the structural schema, the OpenAPI schema validator (ratcheting), the
// status schema validator and the CEL validator with kube-apiserver's
// per-call limit. Each write is then validated by Check.Create, Check.Update
// or Check.StatusUpdate, which mirror the CRD strategy's Validate,
// ValidateUpdate and the status strategy's ValidateUpdate: the same checks
// in the same order, the same field errors (paths, types, messages), the
// same ratcheting of unchanged values, CEL transition rules with oldSelf and
// the per-request runtime cost budget.
//
// Objects are given as unstructured JSON maps (runtime.Unstructured
// content); typed servers convert once per write.
package schemacheck
