/* airlock's WASM-tier Python session entry points (our code, built against
 * CPython's headers by scripts/wasm/build_python.sh into python-session.wasm,
 * a WASI reactor).
 *
 * A command module (python.wasm) keeps its interpreter's C stack alive for
 * as long as it runs: between a session's turns the harness sits inside a
 * read(), with WebAssembly frames on the engine's native stack, and nothing
 * can save that. This reactor is driven from the host instead:
 *
 *   _initialize()             wasi-libc's constructors
 *   airlock_session_init()    Py_InitializeFromConfig with the WASI argv
 *                             (python [options] -c HARNESS), then HARNESS,
 *                             which must bind __main__._airlock_turn
 *   airlock_session_turn()    one call of _airlock_turn(): reads one turn
 *                             from the control descriptor, runs it, answers
 *
 * Between two exports no WebAssembly frame is live and the shadow stack is
 * back at its base, so the guest's whole state is its linear memory (plus
 * the host's WASI state): airlock-js can write it to an image and a fresh
 * instance of this module can go on from it (engine/js/python_session.h).
 * The harness's loop is a generator for that reason: its frame lives on the
 * heap between turns.
 *
 * Return values: 0 done; 1 the harness raised (printed to stderr: the
 * session is broken); 2 bad start-up (message on stderr). */
#include <Python.h>
#include <stdlib.h>
#include <wasi/api.h>

static PyObject *airlock_turn; /* strong reference, for the session's life */

static int fail_status(PyStatus status) {
  if (PyStatus_IsExit(status)) return status.exitcode == 0 ? 2 : status.exitcode;
  fprintf(stderr, "airlock session: %s%s%s\n", status.func ? status.func : "",
          status.func ? ": " : "", status.err_msg ? status.err_msg : "start-up failed");
  return 2;
}

__attribute__((export_name("airlock_session_init"))) int airlock_session_init(void) {
  __wasi_size_t argc = 0, size = 0;
  if (__wasi_args_sizes_get(&argc, &size) != 0 || argc < 1) return 2;
  char **argv = calloc(argc + 1, sizeof(char *));
  char *buf = malloc(size);
  if (argv == NULL || buf == NULL) return 2;
  if (__wasi_args_get((uint8_t **)argv, (uint8_t *)buf) != 0) return 2;

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  PyStatus status = PyConfig_SetBytesArgv(&config, (Py_ssize_t)argc, argv);
  if (!PyStatus_Exception(status)) status = PyConfig_Read(&config);
  if (!PyStatus_Exception(status) && config.run_command == NULL) {
    status = PyStatus_Error("python-session.wasm needs -c HARNESS");
  }
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    return fail_status(status);
  }
  PyObject *source = PyUnicode_FromWideChar(config.run_command, -1);
  PyConfig_Clear(&config);
  free(argv);
  free(buf);
  if (source == NULL) goto error;
  const char *text = PyUnicode_AsUTF8(source);
  if (text == NULL) goto error;
  PyObject *main = PyImport_AddModule("__main__"); /* borrowed */
  if (main == NULL) goto error;
  PyObject *globals = PyModule_GetDict(main); /* borrowed */
  PyObject *code = Py_CompileString(text, "<string>", Py_file_input);
  Py_DECREF(source);
  source = NULL;
  if (code == NULL) goto error;
  PyObject *done = PyEval_EvalCode(code, globals, globals);
  Py_DECREF(code);
  if (done == NULL) goto error;
  Py_DECREF(done);
  airlock_turn = PyObject_GetAttrString(main, "_airlock_turn");
  if (airlock_turn == NULL) goto error;
  return 0;
error:
  Py_XDECREF(source);
  PyErr_Print();
  return 2;
}

__attribute__((export_name("airlock_session_turn"))) int airlock_session_turn(void) {
  if (airlock_turn == NULL) return 2;
  PyObject *r = PyObject_CallNoArgs(airlock_turn);
  if (r == NULL) {
    PyErr_Print();
    return 1;
  }
  Py_DECREF(r);
  return 0;
}
