package apiserver

import (
	"context"
	"slices"

	"github.com/apiloom/apiloom/server/controllers"
	"github.com/apiloom/apiloom/server/controllers/clusterroleaggregation"
	"github.com/apiloom/apiloom/server/controllers/gc"
	"github.com/apiloom/apiloom/server/controllers/namespace"
	"github.com/apiloom/apiloom/server/controllers/policystatus"
	"github.com/apiloom/apiloom/server/controllers/resourcequota"
	"github.com/apiloom/apiloom/server/controllers/svm"
)

// Names of the controllers, as --controllers takes them: kube-controller-
// manager's names for the same loops.
const (
	controllerGC                     = "garbagecollector"
	controllerNamespace              = "namespace"
	controllerClusterRoleAggregation = "clusterrole-aggregation"
	controllerPolicyStatus           = "validatingadmissionpolicy-status"
	controllerStorageVersionMigrator = "storage-version-migrator-controller"
	controllerServiceAccount         = "serviceaccount"
	controllerRootCAPublisher        = "root-ca-cert-publisher"
	controllerResourceQuota          = "resourcequota"
)

// controllerNames are every controller the server can run.
var controllerNames = []string{controllerGC, controllerNamespace, controllerClusterRoleAggregation, controllerPolicyStatus,
	controllerStorageVersionMigrator, controllerServiceAccount, controllerRootCAPublisher,
	controllerResourceQuota}

// controllerEnabled reports whether --controllers (names) enables name, as
// kube-controller-manager reads its flag: "name" enables, "-name"
// disables, "*" enables every one not disabled.
func controllerEnabled(names []string, name string) bool {
	if slices.Contains(names, "-"+name) {
		return false
	}
	return slices.Contains(names, name) || slices.Contains(names, "*")
}

// controllerList is the control loops the server runs (server/controllers
// says how), in the order they start.
func (s *Server) controllerList() []controllers.Controller {
	var list []controllers.Controller
	if controllerEnabled(s.opts.Controllers, controllerGC) {
		list = append(list, gc.New(s.opts.ConcurrentGCSyncs))
	}
	if controllerEnabled(s.opts.Controllers, controllerNamespace) && s.registry.ServesNamespaces() {
		cfg := namespace.DefaultConfig()
		cfg.Workers = s.opts.ConcurrentNamespaceSyncs
		list = append(list, namespace.New(cfg))
	}
	if controllerEnabled(s.opts.Controllers, controllerClusterRoleAggregation) && s.servesClusterRoles() {
		list = append(list, clusterroleaggregation.New(clusterroleaggregation.DefaultConfig()))
	}
	if controllerEnabled(s.opts.Controllers, controllerPolicyStatus) && s.servesPolicies() {
		list = append(list, policystatus.New(5))
	}
	if controllerEnabled(s.opts.Controllers, controllerStorageVersionMigrator) && s.servesMigrations() {
		list = append(list, svm.New(svm.Config{PageSize: s.opts.StorageVersionMigrationPageSize}))
	}
	list = append(list, s.serviceAccountControllers()...)
	if controllerEnabled(s.opts.Controllers, controllerResourceQuota) && s.servesResourceQuotas() {
		list = append(list, resourcequota.New(s.opts.resourceQuotaConfig()))
	}
	return list
}

// runControllers runs the controllers over a loopback client of this
// server until ctx ends. It is called once the server serves.
func (s *Server) runControllers(ctx context.Context) {
	env := &controllers.Env{
		Config:     s.loopbackConfig("apiloom-controllers"),
		Resources:  s.registry.Infos(),
		RESTMapper: s.registry.RESTMapper(),
		Log:        s.log,
	}
	if err := controllers.Run(ctx, env, s.opts.Election, s.controllerList()...); err != nil {
		s.log.Error("controllers stopped", "err", err)
	}
}
