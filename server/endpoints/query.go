package endpoints

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// DecodeQuery sets the fields of into, a pointer to a struct (a stream's
// options), from the query parameters named as the fields' json names,
// as kube-apiserver decodes pods/log's PodLogOptions: strings, bools
// (false only for "0" and "false"), integers, pointers to those, and
// []string (every value of a repeated parameter). Parameters that name no field are ignored, as kube-apiserver
// ignores them; a value that does not parse is 400 BadRequest naming the
// parameter. Fields of other types, and inline or metadata fields, are
// left alone.
func DecodeQuery(q url.Values, into any) error {
	v := reflect.ValueOf(into)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("endpoints: DecodeQuery into %T, not a pointer to a struct", into)
	}
	return decodeStruct(q, v.Elem())
}

func decodeStruct(q url.Values, v reflect.Value) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "metadata" || (name == "" && f.Anonymous) || strings.Contains(opts, "inline") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		values, ok := q[name]
		if !ok || len(values) == 0 {
			continue
		}
		if err := setField(v.Field(i), values); err != nil {
			return errBadQuery(name, values[0], err)
		}
	}
	return nil
}

// setField sets fv from a parameter's values: the first for a scalar,
// all for a []string.
func setField(fv reflect.Value, values []string) error {
	if fv.Kind() == reflect.Slice {
		if fv.Type().Elem().Kind() != reflect.String {
			return nil
		}
		s := reflect.MakeSlice(fv.Type(), len(values), len(values))
		for i, x := range values {
			s.Index(i).SetString(x)
		}
		fv.Set(s)
		return nil
	}
	if fv.Kind() == reflect.Pointer {
		elem := reflect.New(fv.Type().Elem())
		if !scalar(elem.Elem().Kind()) {
			return nil
		}
		if err := setScalar(elem.Elem(), values[0]); err != nil {
			return err
		}
		fv.Set(elem)
		return nil
	}
	return setScalar(fv, values[0])
}

// setScalar parses s into fv, a string, bool or integer; values of other
// kinds are left alone.
func setScalar(fv reflect.Value, s string) error {
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(s)
	case reflect.Bool:
		// As apimachinery's query conversion reads a bool: only "0" and
		// "false" are false; any other value, "" included, is true
		// (?follow means follow=true).
		fv.SetBool(s != "0" && !strings.EqualFold(s, "false"))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("not an integer of %d bits", fv.Type().Bits())
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, fv.Type().Bits())
		if err != nil {
			return fmt.Errorf("not a non-negative integer of %d bits", fv.Type().Bits())
		}
		fv.SetUint(n)
	}
	return nil
}

// scalar reports whether setScalar parses values of kind k.
func scalar(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}
