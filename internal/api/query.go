package api

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// A request also travels as text: the path's {id} and a GET's query are
// its fields, named by their json tags (embedded structs flattened). Only
// strings, booleans and integers can; a test keeps the GET ops to those.

// field is one JSON field of a request struct.
type field struct {
	name string
	v    reflect.Value
}

// fields lists v's JSON fields, embedded structs flattened.
func fields(v reflect.Value) []field {
	var out []field
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fields(v.Field(i))...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name, v.Field(i)})
	}
	return out
}

// TextField reports whether a field of kind k can travel in a path or a
// query.
func TextField(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// EncodeText returns the fields of req (a struct or a pointer to one) that
// are not zero, as text by JSON name, for a path and a query.
func EncodeText(req any) url.Values {
	out := url.Values{}
	v := reflect.Indirect(reflect.ValueOf(req))
	if v.Kind() != reflect.Struct {
		return out
	}
	for _, f := range fields(v) {
		if f.v.IsZero() || !TextField(f.v.Kind()) {
			continue
		}
		switch f.v.Kind() {
		case reflect.String:
			out.Set(f.name, f.v.String())
		case reflect.Bool:
			out.Set(f.name, strconv.FormatBool(f.v.Bool()))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out.Set(f.name, strconv.FormatUint(f.v.Uint(), 10))
		default:
			out.Set(f.name, strconv.FormatInt(f.v.Int(), 10))
		}
	}
	return out
}

// DecodeText sets the fields of *req named in vals (by JSON name) from
// their first value; other names are ignored. A value that does not parse
// as its field's type is a bad_request error that names the field.
func DecodeText(vals url.Values, req any) error {
	v := reflect.ValueOf(req)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("api: DecodeText wants a pointer to a struct, got %T", req)
	}
	for _, f := range fields(v.Elem()) {
		vs, ok := vals[f.name]
		if !ok || len(vs) == 0 {
			continue
		}
		s := vs[0]
		bad := func(want string) error {
			return Errorf(CodeBadRequest, "%s: %q is not %s", f.name, s, want)
		}
		switch k := f.v.Kind(); {
		case k == reflect.String:
			f.v.SetString(s)
		case k == reflect.Bool:
			b, err := strconv.ParseBool(s)
			if err != nil {
				return bad("true or false")
			}
			f.v.SetBool(b)
		case k >= reflect.Int && k <= reflect.Int64:
			n, err := strconv.ParseInt(s, 10, f.v.Type().Bits())
			if err != nil {
				return bad("a whole number")
			}
			f.v.SetInt(n)
		case k >= reflect.Uint && k <= reflect.Uint64:
			n, err := strconv.ParseUint(s, 10, f.v.Type().Bits())
			if err != nil {
				return bad("a whole number from 0")
			}
			f.v.SetUint(n)
		default:
			return Errorf(CodeBadRequest, "%s cannot be given as text", f.name)
		}
	}
	return nil
}

// BodyFields reports whether requests of type t carry fields beyond the
// path's: whether an HTTP request of op o has a body (or, for a GET, a
// query).
func (o OpInfo) BodyFields() bool {
	if o.Request == nil || o.Request.Kind() != reflect.Struct {
		return false
	}
	path := map[string]bool{}
	for _, p := range o.PathParams() {
		path[p] = true
	}
	for _, f := range fields(reflect.New(o.Request).Elem()) {
		if !path[f.name] {
			return true
		}
	}
	return false
}

// Target is where an HTTP request of op o for req goes: the path with its
// wildcards filled in from req, and, for a GET, the query of req's other
// fields that are not zero.
func (o OpInfo) Target(req any) (string, error) {
	text := EncodeText(req)
	path := o.Path
	for _, p := range o.PathParams() {
		v := text.Get(p)
		if v == "" {
			return "", Errorf(CodeBadRequest, "%s: no %s given", o.Name, p)
		}
		path = strings.Replace(path, "{"+p+"}", url.PathEscape(v), 1)
		text.Del(p)
	}
	if o.Method == "GET" && len(text) > 0 {
		path += "?" + text.Encode()
	}
	return path, nil
}

// FieldNames lists the JSON names of the fields of a request type, with
// whether each can travel as text.
func FieldNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	if t.Kind() != reflect.Struct {
		return out
	}
	for _, f := range fields(reflect.New(t).Elem()) {
		out[f.name] = TextField(f.v.Kind())
	}
	return out
}
