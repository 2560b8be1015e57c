#!/usr/bin/env node
'use strict';
require('../dist/starter/cli.js').main(process.argv.slice(2));
