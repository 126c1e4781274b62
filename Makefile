# Convenience targets around cargo. One build per MPI: MPI=openmpi (the
# default, target/) or MPI=mpich (target/mpich).
#   make demo | make test | make install PREFIX=/opt/pnmpi [MPI=mpich]
# `make install-files` installs an existing build without building
# (TARGET=folder of its libpnmpi.so; tests/package.rs uses it).
# The recipes source scripts/mpi-env.sh, which is bash.
SHELL := /bin/bash
MPI ?= openmpi
PREFIX ?= /usr/local
TARGET ?= $(if $(filter mpich,$(MPI)),target/mpich,target)/release
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MPI_PC = $(if $(filter mpich,$(MPI)),mpich,ompi-c)
# @NAME@ in packaging/*.in, for the pkg-config and CMake files.
SUBST = sed -e 's|@PREFIX@|$(abspath $(PREFIX))|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@MPI@|$(MPI)|g' \
	-e "s|@MPICC@|$$(. scripts/mpi-env.sh $(MPI) && echo $$MPICC)|g" -e 's|@MPI_PC@|$(MPI_PC)|g'

.PHONY: build demo test install install-files

build:
	. scripts/mpi-env.sh $(MPI) && cargo build --release --workspace --locked

demo:
	scripts/demo.sh $(MPI)

test:
	scripts/test.sh

install: build
	$(MAKE) install-files

install-files:
	install -d $(PREFIX)/lib/pnmpi/modules $(PREFIX)/include/pnmpi $(PREFIX)/bin $(PREFIX)/share/pnmpi \
		$(PREFIX)/lib/pkgconfig $(PREFIX)/lib/cmake/PnMPI
	install -m 755 $(TARGET)/libpnmpi.so $(TARGET)/libvranks.so $(PREFIX)/lib/
	install -m 755 $(TARGET)/libempty.so $(PREFIX)/lib/pnmpi/modules/empty.so
	install -m 755 $(TARGET)/libtracer.so $(PREFIX)/lib/pnmpi/modules/tracer.so
	install -m 755 $(TARGET)/libprofiler.so $(PREFIX)/lib/pnmpi/modules/profiler.so
	install -m 755 $(TARGET)/libvtime.so $(PREFIX)/lib/pnmpi/modules/vtime.so
	install -m 755 $(TARGET)/libreplay.so $(PREFIX)/lib/pnmpi/modules/replay.so
	install -m 755 $(TARGET)/libchecker.so $(PREFIX)/lib/pnmpi/modules/checker.so
	install -m 755 $(TARGET)/libstatus.so $(PREFIX)/lib/pnmpi/modules/status.so
	install -m 755 $(TARGET)/librequests.so $(PREFIX)/lib/pnmpi/modules/requests.so
	install -m 755 $(TARGET)/libpiggyback.so $(PREFIX)/lib/pnmpi/modules/piggyback.so
	install -m 755 $(TARGET)/libdatatype.so $(PREFIX)/lib/pnmpi/modules/datatype.so
	install -m 755 $(TARGET)/libcomm.so $(PREFIX)/lib/pnmpi/modules/comm.so
	install -m 755 $(TARGET)/pnmpi $(TARGET)/pnmpi-patch $(PREFIX)/bin/
	install -m 644 $(TARGET)/include/xmpi.h include/pnmpi.h include/pnmpi/debug_io.h include/pnmpi/status.h include/pnmpi/requests.h include/pnmpi/datatype.h include/pnmpi/comm.h include/pnmpi/commsub.h $(PREFIX)/include/pnmpi/
	install -m 644 $(TARGET)/pnmpi-build-report.txt pnmpi.toml $(PREFIX)/share/pnmpi/
	$(SUBST) packaging/pnmpi.pc.in > $(PREFIX)/lib/pkgconfig/pnmpi.pc
	$(SUBST) packaging/pnmpi-module.pc.in > $(PREFIX)/lib/pkgconfig/pnmpi-module.pc
	$(SUBST) packaging/PnMPIConfig.cmake.in > $(PREFIX)/lib/cmake/PnMPI/PnMPIConfig.cmake
	$(SUBST) packaging/PnMPIConfigVersion.cmake.in > $(PREFIX)/lib/cmake/PnMPI/PnMPIConfigVersion.cmake
