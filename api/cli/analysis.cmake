# xwires CLI: analysis commands. target_sources(xwires PRIVATE ...) and target_link_libraries(xwires PRIVATE ...).
