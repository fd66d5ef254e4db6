#!/usr/bin/env node
// The `flagstaff-server` command: serves, or with `admin-key …` manages admin keys in the database. This file
// is committed, not built, so that npm links the command at install time, before the build has made dist/.
import "../dist/src/main.js";
