'use strict';
/** The worker's errors around the core API, of the classes and with the words of the real Node worker's errors.ts. */

/** An error of the worker's own (not the user's code); the real worker marks them the same way. */
class AzFuncSystemError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.isAzureFunctionsSystemError = true;
  }
}

class AzFuncTypeError extends TypeError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.isAzureFunctionsSystemError = true;
  }
}

/** The real worker throws this (a RangeError) for an unknown hook; the library tells "log" hooks apart by it. */
class AzFuncRangeError extends RangeError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.isAzureFunctionsSystemError = true;
  }
}

class ReadOnlyError extends AzFuncTypeError {
  /** @param {string} propertyName */
  constructor(propertyName) {
    super(`Cannot assign to read only property '${propertyName}'`);
  }
}

module.exports = { AzFuncSystemError, AzFuncTypeError, AzFuncRangeError, ReadOnlyError };
