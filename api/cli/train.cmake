# xwires CLI: train commands. target_sources(xwires PRIVATE ...) and target_link_libraries(xwires PRIVATE ...).
target_sources(xwires PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cmd_train.cc
  ${CMAKE_CURRENT_LIST_DIR}/cmd_predict.cc
  ${CMAKE_CURRENT_LIST_DIR}/train_common.cc
)
target_link_libraries(xwires PRIVATE xwires_api xwires_trainers xwires_dataset)
