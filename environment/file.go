package environment

import (
	"errors"

	toolenv "github.com/toolenv/toolenv"
	"github.com/toolenv/toolenv/internal/configfile"
)

// SchemaID is the $id of the configuration file's JSON Schema.
const SchemaID = "https://github.com/toolenv/toolenv/docs/toolenv.schema.json"

// LoadConfig reads a configuration file (YAML, or JSON) over Default():
// keys absent from the file keep their defaults. It returns the warnings
// to show the user (credentials written inline, each with the file and
// line). Problems with the file are *toolenv.Error values with
// StatusInvalidArguments (StatusNotFound for a missing file) listing every
// problem found, each with its line and key.
func LoadConfig(path string) (Config, []string, error) {
	c := Default()
	f, err := configfile.Load(path, &c)
	if err != nil {
		return Config{}, nil, fileError(err)
	}
	return c, f.Warnings, nil
}

// fileError gives an error of configfile a status.
func fileError(err error) error {
	status := toolenv.StatusInvalidArguments
	if errors.Is(err, configfile.ErrNotExist) {
		status = toolenv.StatusNotFound
	}
	return &toolenv.Error{Status: status, Err: err}
}

// Schema returns the JSON Schema of configuration files.
func Schema() ([]byte, error) {
	return configfile.Schema(&Config{}, SchemaID, "toolenv configuration")
}

// Print returns the configuration as a file would hold it, in YAML
// ("yaml") or JSON ("json"), every field included. Credentials are shown
// as the variable that holds them (the *_env keys); one written inline is
// hidden, as are passwords in URLs.
func (c *Config) Print(format string) ([]byte, error) {
	return configfile.Marshal(c, format)
}

// Redacted returns the configuration as Print does, as a value that
// marshals to JSON in field order: what reports record.
func (c *Config) Redacted() any { return configfile.Redacted(c) }

// Reference returns the Markdown table of every configuration key, with
// its flag, type, default and description (docs/config.md holds it).
func Reference() string { return configfile.Reference(&Config{}) }
