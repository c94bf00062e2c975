# Extra rules for CPython's own Makefile (make -f Makefile -f session.mk):
# python-session.wasm, a WASI reactor linked exactly as python.wasm is
# ($(BUILDPYTHON)'s rule in Makefile.pre.in) but from airlock_session.c
# instead of Programs/python.c. AIRLOCK_SESSION_C names that file.
Programs/airlock_session.o: $(AIRLOCK_SESSION_C)
	$(CC) -c $(PY_CORE_CFLAGS) -o $@ $(AIRLOCK_SESSION_C)

python-session.wasm: Programs/airlock_session.o $(LINK_PYTHON_DEPS)
	$(LINKCC) $(PY_CORE_LDFLAGS) $(LINKFORSHARED) -mexec-model=reactor \
	  -Wl,--export=__stack_pointer \
	  -o $@ Programs/airlock_session.o $(LINK_PYTHON_OBJS) $(LIBS) $(MODLIBS) $(SYSLIBS)
