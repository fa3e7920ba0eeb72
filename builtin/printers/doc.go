// Package printers holds the Tables of built-in kinds whose kube-apiserver
// printer computes its cells rather than reading one field each
// (builtin/apis.yaml names them in a kind's `printer`): the same columns,
// descriptions and cells, so `kubectl get` prints what it prints against
// kube-apiserver.
package printers
