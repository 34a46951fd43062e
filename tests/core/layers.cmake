# Tests of the layers group (see tests/core/CMakeLists.txt).
xwires_add_test(layers_tests
  SOURCES batchnorm_layer_test.cc batchnorm_torch_test.cc pooling_layer_test.cc
    elementwise_layer_test.cc loss_test.cc pool_scatter_test.cc
  LIBS xwires_core nlohmann_json::nlohmann_json)
