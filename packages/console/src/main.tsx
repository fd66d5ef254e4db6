import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
// The styles in cascade order: the theme and the elements, then the page chrome, then the pages' own.
import "./styles/base.css";
import "./styles/chrome.css";
import "./styles/pages.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
