package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Marshal writes c as YAML that Parse reads back to the same Config:
// durations and sizes with units, zero values left out, "$" escaped where
// Parse would expand it. Use c.Redacted() first for anything shown to people.
func Marshal(c *Config) ([]byte, error) {
	n := encode(reflect.ValueOf(c).Elem())
	if n == nil {
		n = &yaml.Node{Kind: yaml.MappingNode}
	}
	return yaml.Marshal(n)
}

// encode builds the YAML node of v, or nil for a zero value.
func encode(v reflect.Value) *yaml.Node {
	if v.IsZero() {
		return nil
	}
	switch v.Type() {
	case fieldsType:
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, f := range v.Interface().(Fields) {
			val := encode(reflect.ValueOf(f))
			if val == nil {
				val = &yaml.Node{Kind: yaml.MappingNode}
			}
			n.Content = append(n.Content, scalar("!!str", f.Name), val)
		}
		return n
	case durationType:
		return scalar("!!str", time.Duration(v.Int()).String())
	case sizeType:
		return scalar("!!str", Size(v.Int()).String())
	}
	switch v.Kind() {
	case reflect.Interface:
		return encode(v.Elem())
	case reflect.Pointer:
		if v.Elem().Kind() == reflect.Bool { // robots: false must survive
			return scalar("!!bool", strconv.FormatBool(v.Elem().Bool()))
		}
		return encode(v.Elem())
	case reflect.String:
		s := v.String()
		if strings.Contains(s, "$$") || strings.Contains(s, "${") {
			s = strings.ReplaceAll(s, "$", "$$")
		}
		return scalar("!!str", s)
	case reflect.Bool:
		return scalar("!!bool", strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int64:
		return scalar("!!int", strconv.FormatInt(v.Int(), 10))
	case reflect.Float64:
		return scalar("!!float", strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for i := 0; i < v.Len(); i++ {
			item := encode(v.Index(i))
			if item == nil { // a zero element still has a place in the list
				item = scalar("!!str", "")
				if v.Index(i).Kind() != reflect.String {
					item = scalar("!!int", "0")
				}
			}
			n.Content = append(n.Content, item)
		}
		return n
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			val := encode(v.MapIndex(k))
			if val == nil {
				val = scalar("!!str", "")
			}
			n.Content = append(n.Content, scalar("!!str", k.String()), val)
		}
		return n
	case reflect.Struct:
		n := &yaml.Node{Kind: yaml.MappingNode}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			name, opts, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if name == "" && opts == "inline" { // a driver's section: its keys are the section's
				if val := encode(v.Field(i)); val != nil && val.Kind == yaml.MappingNode {
					n.Content = append(n.Content, val.Content...)
				}
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			if val := encode(v.Field(i)); val != nil {
				n.Content = append(n.Content, scalar("!!str", name), val)
			}
		}
		return n
	}
	return nil
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
