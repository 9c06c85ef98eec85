export { loadPage, type PageAssets } from "./bundle";
export { startVisualizer, type RunningVisualizer, type VisualizerOptions } from "./server";
