# The GPU subset (label gpu) of a CUDA build, besides the cuDNN cases of tests/ops, included by
# tests/CMakeLists.txt once tessera_layer_reference, tessera_spatial_equivalence,
# tessera_channel_equivalence, tessera_precision_equivalence and tessera_population_check exist. What needs a host build's results names them by path
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
# Every layout with its ranks sharing the one GPU, each against the same layers on 1 rank (the
# CPU suite's programs and checks): spatial splits (depth; height in 2-D; depth x height;
# samples x width), channel and filter splits, the 2-D channel x filter grid, the 2 x 2 x 2 cube
# (8 ranks), bf16 under depth, filter and channel splits on cuDNN, and a population of 2
# trainers (LTFB).
foreach(layout
    "spatial|2|{\"depth\": 2}|3d" "spatial|2|{\"height\": 2}|2d" "spatial|4|{\"depth\": 2, \"height\": 2}|3d"
    "spatial|4|{\"sample\": 2, \"width\": 2}|3d" "channel|2|{\"filter\": 2}|3d" "channel|2|{\"channel\": 2}|3d"
    "channel|4|{\"channel\": 2, \"filter\": 2}|3d" "channel|8|{\"cube\": 2}|3d")
  string(REPLACE "|" ";" parts "${layout}")
  list(GET parts 0 program)
  list(GET parts 1 ranks)
  list(GET parts 2 distribution)
  list(GET parts 3 dims)
  set(name "gpu: ${ranks} ranks sharing the GPU, ${dims} layers split ${distribution}, equal 1 rank")
  add_test(NAME "${name}" COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ranks} ${tessera_mpi_flags}
           $<TARGET_FILE:tessera_${program}_equivalence> "${distribution}" ${dims})
  set_tests_properties("${name}" PROPERTIES LABELS gpu ENVIRONMENT "${tessera_mpi_env}" TIMEOUT 180)
endforeach()
foreach(distribution "{\"depth\": 2}" "{\"filter\": 2}" "{\"channel\": 2}")
  set(name "gpu: 2 ranks sharing the GPU, bf16 layers split ${distribution}, equal bf16 on 1 rank with half the bytes")
  add_test(NAME "${name}" COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${tessera_mpi_flags}
           $<TARGET_FILE:tessera_precision_equivalence> "${distribution}" cudnn)
  set_tests_properties("${name}" PROPERTIES LABELS gpu ENVIRONMENT "${tessera_mpi_env}" TIMEOUT 180)
endforeach()
set(name "gpu: a population of 2 trainers sharing the GPU meets its contracts (pairs, exchange, resume)")
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/gpu_population)
add_test(NAME "${name}" COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${tessera_mpi_flags}
         $<TARGET_FILE:tessera_population_check> plain ${CMAKE_CURRENT_BINARY_DIR}/gpu_population)
set_tests_properties("${name}" PROPERTIES LABELS gpu ENVIRONMENT "${tessera_mpi_env}" TIMEOUT 180)
