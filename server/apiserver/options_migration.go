package apiserver

import "github.com/spf13/pflag"

// MigrationOptions tune the storage-version-migrator controller.
type MigrationOptions struct {
	// StorageVersionMigrationPageSize is how many objects the controller
	// lists and rewrites between two records of its progress; 0 is the
	// controller's default (500). A smaller page repeats less after a
	// restart and writes the migration more often.
	StorageVersionMigrationPageSize int64
}

func (o *Options) addMigrationFlags(fs *pflag.FlagSet) {
	fs.Int64Var(&o.StorageVersionMigrationPageSize, "storage-version-migration-page-size", o.StorageVersionMigrationPageSize,
		"objects the storage-version-migrator controller rewrites between two records of its progress (a restart repeats at most one page); 0 is 500")
}
