#!/usr/bin/env node
// The `flagstaff` command. This file is committed, not built, so that npm links the command at install time,
// before the build (the root `prepare` script) has made dist/.
import "../dist/src/main.js";
