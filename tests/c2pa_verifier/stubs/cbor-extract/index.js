// cbor-x loads this optional native module inside try/catch and decodes in JavaScript without it.
throw new Error('cbor-extract is not installed here (JavaScript decoding is used)');
