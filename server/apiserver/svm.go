package apiserver

import (
	"slices"

	"github.com/apiloom/apiloom/server/resource"
)

// servesMigrations reports whether StorageVersionMigrations are served,
// which the storage-version-migrator controller reads and writes.
func (s *Server) servesMigrations() bool {
	return slices.ContainsFunc(s.registry.Infos(), func(i *resource.Info) bool {
		return i.Group == "storagemigration.k8s.io" && i.Plural == "storageversionmigrations"
	})
}
