# The GPU subset (label gpu) of a CUDA build, besides the cuDNN cases of tests/ops, included by
# tests/CMakeLists.txt once tessera_layer_reference, tessera_spatial_equivalence and
# tessera_precision_equivalence exist. What needs a host build's results names them by path
# (scripts/gpu_bundle.sh sets both).
set(TESSERA_HOST_REFERENCE "" CACHE FILEPATH "A layer reference written by a CPU build (tessera_layer_reference write)")
set(TESSERA_HOST_TESSERA "" CACHE FILEPATH "A CPU build's tessera, to resume the GPU build's checkpoints")
if(TESSERA_HOST_REFERENCE)
  set(name "gpu: every layer type on the device matches the host build, with the cuDNN and the Kokkos ops")
  add_test(NAME "${name}" COMMAND tessera_layer_reference check ${TESSERA_HOST_REFERENCE} --backend auto,kokkos)
  set_tests_properties("${name}" PROPERTIES LABELS gpu TIMEOUT 120)
endif()
if(TESSERA_HOST_TESSERA)
  set(name "gpu: a checkpoint written on the GPU resumes on the CPU with the same losses")
  add_test(NAME "${name}" COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_resume_across_builds.sh ${tessera_exe}
           ${TESSERA_HOST_TESSERA} ${PROJECT_SOURCE_DIR}/examples/cosmoflow_tiny.json ${CMAKE_CURRENT_BINARY_DIR}/across)
  set_tests_properties("${name}" PROPERTIES LABELS gpu TIMEOUT 180)
endif()
set(name "gpu: 2 ranks sharing the GPU, split over depth, equal 1 rank")
add_test(NAME "${name}" COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${tessera_mpi_flags}
         $<TARGET_FILE:tessera_spatial_equivalence> "{\"depth\": 2}" 3d)
set_tests_properties("${name}" PROPERTIES LABELS gpu ENVIRONMENT "${tessera_mpi_env}" TIMEOUT 180)
set(name "gpu: 2 ranks sharing the GPU, bf16 layers split over depth, equal bf16 on 1 rank with half the bytes")
add_test(NAME "${name}" COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${tessera_mpi_flags}
         $<TARGET_FILE:tessera_precision_equivalence> "{\"depth\": 2}" cudnn)
set_tests_properties("${name}" PROPERTIES LABELS gpu ENVIRONMENT "${tessera_mpi_env}" TIMEOUT 180)
