package storage

// WithSyncPageSize lets tests make a watch's initial read span pages.
var WithSyncPageSize = withSyncPageSize
