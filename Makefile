# Convenience targets around cargo. One build per MPI: MPI=openmpi (the
# default, target/) or MPI=mpich (target/mpich).
#   make demo | make test | make install PREFIX=/opt/pnmpi [MPI=mpich]
# The recipes source scripts/mpi-env.sh, which is bash.
SHELL := /bin/bash
MPI ?= openmpi
PREFIX ?= /usr/local
TARGET = $(if $(filter mpich,$(MPI)),target/mpich,target)/release

.PHONY: build demo test install

build:
	. scripts/mpi-env.sh $(MPI) && cargo build --release --workspace --locked

demo:
	scripts/demo.sh $(MPI)

test:
	scripts/test.sh

install: build
	install -d $(PREFIX)/lib/pnmpi/modules $(PREFIX)/include/pnmpi $(PREFIX)/bin $(PREFIX)/share/pnmpi
	install -m 755 $(TARGET)/libpnmpi.so $(TARGET)/libvranks.so $(PREFIX)/lib/
	install -m 755 $(TARGET)/libempty.so $(PREFIX)/lib/pnmpi/modules/empty.so
	install -m 755 $(TARGET)/libtracer.so $(PREFIX)/lib/pnmpi/modules/tracer.so
	install -m 755 $(TARGET)/libprofiler.so $(PREFIX)/lib/pnmpi/modules/profiler.so
	install -m 755 $(TARGET)/libvtime.so $(PREFIX)/lib/pnmpi/modules/vtime.so
	install -m 755 $(TARGET)/pnmpi $(TARGET)/pnmpi-patch $(PREFIX)/bin/
	install -m 644 $(TARGET)/include/xmpi.h include/pnmpi.h $(PREFIX)/include/pnmpi/
	install -m 644 $(TARGET)/pnmpi-build-report.txt pnmpi.toml $(PREFIX)/share/pnmpi/
