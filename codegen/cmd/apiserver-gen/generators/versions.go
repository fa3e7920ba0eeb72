package generators

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/gengo/v2"
	"k8s.io/gengo/v2/types"

	"github.com/apiloom/apiloom/codegen/markers"
)

// conversionGenTag is the package tag that makes conversion-gen write the
// conversions between a package and the peer package it names.
const conversionGenTag = "k8s:conversion-gen"

// storedAs is where the objects of a version that is not its kind's
// storage version are kept, and how they get there.
type storedAs struct {
	GV       *groupVersion
	Resource *resourceModel
	// ToStorage and FromStorage are the conversion functions, in the
	// version's own package, as conversion-gen names them.
	ToStorage, FromStorage string
	// ToStorageFunc and FromStorageFunc, when set, are the conversion
	// functions in another package (a built-in kind's, named by
	// builtin/apis.yaml), in place of ToStorage and FromStorage.
	ToStorageFunc, FromStorageFunc *types.Type
	// FieldLabels maps field-selector keys to the storage version's.
	FieldLabels map[string]string
	// OtherGroup is true when the storage version is in another API group.
	OtherGroup bool
}

// linkVersions finds the kinds served in several versions of one group
// and, for each, its storage version: exactly one version must carry
// +kubebuilder:storageversion. Every other version is pointed at it
// (StoredAs); its package must name the storage version's package in
// +k8s:conversion-gen, so that conversion-gen writes the conversions, and
// they must exist. Every problem is reported with the file and line to
// fix.
func linkVersions(gvs []*groupVersion) error {
	type version struct {
		gv *groupVersion
		r  *resourceModel
	}
	byKind := map[string][]version{}
	var kinds []string
	for _, gv := range gvs {
		for _, r := range gv.Resources {
			k := r.Kind + "." + gv.Group
			if byKind[k] == nil {
				kinds = append(kinds, k)
			}
			byKind[k] = append(byKind[k], version{gv, r})
		}
	}
	sort.Strings(kinds)
	var errs []error
	for _, k := range kinds {
		versions := byKind[k]
		var stored []version
		for _, v := range versions {
			if v.r.StorageVersionMarker {
				stored = append(stored, v)
			}
		}
		if len(versions) == 1 {
			continue // one version is stored as it is, marker or not
		}
		names := make([]string, len(versions))
		for i, v := range versions {
			names[i] = v.gv.Version
		}
		switch len(stored) {
		case 1:
		case 0:
			for _, v := range versions {
				errs = append(errs, fmt.Errorf("%s: %s is served in versions %s and none has +%s: mark exactly one, the version objects are stored in",
					typePosition(v.gv, v.r), k, strings.Join(names, ", "), markers.StorageVersionName))
			}
			continue
		default:
			for _, v := range stored {
				errs = append(errs, fmt.Errorf("%s: %s has +%s in %d versions: mark exactly one",
					markerPositionOr(v.gv, v.r, "+"+markers.StorageVersionName), k, markers.StorageVersionName, len(stored)))
			}
			continue
		}
		sv := stored[0]
		for _, v := range versions {
			if v == sv {
				continue
			}
			link, err := storedAsFor(v.gv, v.r, sv.gv, sv.r)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			v.r.StoredAs = link
		}
	}
	return errors.Join(errs...)
}

// storedAsFor checks that version r of gv can be stored as sr of sgv and
// returns the link.
func storedAsFor(gv *groupVersion, r *resourceModel, sgv *groupVersion, sr *resourceModel) (*storedAs, error) {
	var errs []error
	peers := gengo.ExtractCommentTags("+", gv.Pkg.Comments)[conversionGenTag]
	if !slices.Contains(peers, sgv.Pkg.Path) {
		errs = append(errs, fmt.Errorf("%s: %s/%s %s is stored as %s: the package needs +%s=%s in its doc.go, so that conversion-gen writes the conversions",
			docPosition(gv), gv.Group, gv.Version, r.Kind, sgv.Version, conversionGenTag, sgv.Pkg.Path))
	}
	link := &storedAs{
		GV: sgv, Resource: sr,
		ToStorage:   conversionName(gv.Version, r.Kind, sgv.Version, sr.Kind),
		FromStorage: conversionName(sgv.Version, sr.Kind, gv.Version, r.Kind),
	}
	if len(errs) == 0 {
		for _, fn := range []string{link.ToStorage, link.FromStorage} {
			if gv.Pkg.Functions[fn] == nil {
				errs = append(errs, fmt.Errorf("%s: %s/%s %s is stored as %s but the package has no %s: run conversion-gen (make generate), and write the conversions it cannot",
					docPosition(gv), gv.Group, gv.Version, r.Kind, sgv.Version, fn))
			}
		}
	}
	// Field selectors are evaluated on stored objects (package convert).
	for _, f := range r.SelectableFields {
		if !slices.ContainsFunc(sr.SelectableFields, func(s *fieldGetter) bool { return s.Key == f.Key }) {
			errs = append(errs, fmt.Errorf("%s: +%s:JSONPath=.%s: field selectors are evaluated on the stored %s, which has no such selectable field",
				markerPositionOr(gv, r, "+"+markers.SelectableFieldName+":JSONPath=."+f.Key), markers.SelectableFieldName, f.Key, sgv.Version))
		}
	}
	return link, errors.Join(errs...)
}

// conversionName is the name conversion-gen gives the conversion of kind
// in from version to kind in version to.
func conversionName(from, fromKind, to, toKind string) string {
	return "Convert_" + from + "_" + fromKind + "_To_" + to + "_" + toKind
}

// typePosition is "file:line" of r's type declaration, or the package.
func typePosition(gv *groupVersion, r *resourceModel) string {
	if pos := linePosition(gv.Pkg.Dir, "type "+r.Kind+" "); pos != "" {
		return pos
	}
	return gv.Pkg.Path + "." + r.Kind
}

// markerPositionOr is "file:line" of the marker text, or of r's type.
func markerPositionOr(gv *groupVersion, r *resourceModel, text string) string {
	if pos := markerPosition(gv.Pkg.Dir, text); pos != "" {
		return pos
	}
	return typePosition(gv, r)
}

// docPosition is "file:line" of the package clause in doc.go, or the
// package's path.
func docPosition(gv *groupVersion) string {
	if pos := linePosition(gv.Pkg.Dir, "package "); pos != "" {
		return pos
	}
	return gv.Pkg.Path
}

// linePosition is "file:line" of the first line of a hand-written Go file
// in dir that starts with prefix, doc.go first, or "".
func linePosition(dir, prefix string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Slice(files, func(i, j int) bool {
		di, dj := filepath.Base(files[i]) == "doc.go", filepath.Base(files[j]) == "doc.go"
		if di != dj {
			return di
		}
		return files[i] < files[j]
	})
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(filepath.Base(f), "zz_generated") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for n := 1; sc.Scan(); n++ {
			if strings.HasPrefix(sc.Text(), prefix) {
				fh.Close()
				return fmt.Sprintf("%s:%d", f, n)
			}
		}
		fh.Close()
	}
	return ""
}
