/*
 * ini.c — INI files into a parameter set: "[section]" and "key = value"
 * lines, ';' and '#' comments, a UTF-8 BOM; all or nothing (a bad line
 * leaves the set as it was), every message naming file and line.
 */
#include "io/config/config_private.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Strips a comment (from ';' or '#') and surrounding blanks in place. */
static char *ini_strip(char *line) {
  line[strcspn(line, ";#\r\n")] = '\0';
  while (isspace((unsigned char)*line))
    line++;
  size_t len = strlen(line);
  while (len && isspace((unsigned char)line[len - 1]))
    line[--len] = '\0';
  return line;
}

/* Handles "[name]": checks the name and makes it the current section. */
static talus_status ini_section(char *line, char *section, size_t cap, const char *where) {
  char *close = strchr(line, ']');
  if (!close || close[1] != '\0')
    return talus_fail(TALUS_ERR_FORMAT, "params", "%sexpected '[section]'", where);
  *close = '\0';
  char *name = ini_strip(line + 1);
  if (!*name) return talus_fail(TALUS_ERR_FORMAT, "params", "%sempty section name", where);
  talus_status st = talus_params_section_check(name, cap, where);
  if (st) return st;
  strcpy(section, name);
  return TALUS_OK;
}

/* Handles "key = value" inside `section` ("" before any: key is full). */
static talus_status ini_assign(talus_params *p, char *line, const char *section,
                               const char *where) {
  char *eq = strchr(line, '=');
  if (!eq)
    return talus_fail(TALUS_ERR_FORMAT, "params", "%sexpected 'key = value' or '[section]'", where);
  *eq = '\0';
  char *key = ini_strip(line), *value = ini_strip(eq + 1);
  if (!*key) return talus_fail(TALUS_ERR_FORMAT, "params", "%smissing key before '='", where);
  char full[2 * TALUS_PARAM_KEY_MAX + 2];
  int n = snprintf(full, sizeof full, "%s%s%s", section, *section ? "." : "", key);
  if (n < 0 || (size_t)n >= sizeof full) return talus_params_unknown_key(key, where);
  return talus_params_set_at(p, full, value, where);
}

/* Parses one line (1-based lineno) of an INI file. */
static talus_status ini_line(talus_params *p, char *line, long lineno, char *section, size_t cap,
                             const char *path) {
  char where[512];
  snprintf(where, sizeof where, "%s:%ld: ", path, lineno);
  if (lineno == 1 && !strncmp(line, "\xEF\xBB\xBF", 3)) line += 3; /* UTF-8 BOM */
  line = ini_strip(line);
  if (!*line) return TALUS_OK;
  if (*line == '[') return ini_section(line, section, cap, where);
  return ini_assign(p, line, section, where);
}

talus_status talus_params_load(talus_params *params, const char *path) {
  if (!params || !path)
    return talus_fail(TALUS_ERR_ARGUMENT, "params", "load needs a parameter set and a path");
  FILE *f = fopen(path, "r");
  if (!f) return talus_fail(TALUS_ERR_IO, "params", "cannot open '%s': %s", path, strerror(errno));
  talus_params work = *params; /* all or nothing: a bad line leaves params as they were */
  char section[TALUS_PARAM_KEY_MAX + 1] = "";
  char *line = NULL;
  size_t linecap = 0;
  long lineno = 0;
  talus_status st = TALUS_OK;
  while (!st && getline(&line, &linecap, f) != -1)
    st = ini_line(&work, line, ++lineno, section, sizeof section, path);
  if (!st && ferror(f)) st = talus_fail(TALUS_ERR_IO, "params", "error reading '%s'", path);
  free(line);
  fclose(f);
  if (!st) *params = work;
  return st;
}
